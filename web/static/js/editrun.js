import { el } from "./dom.js";
import { announce } from "./notice.js";
import { call, explainError } from "./runs-api.js";

// "Edit in the form" on the runs page opens /#edit-run=ID: the run's config comes into the form as an import (with
// Undo), at the run's world size, to be changed and launched again. The address loses the fragment at once.
export async function openRunFromAddress(app) {
  const id = location.hash.match(/(?:^#|&)edit-run=([0-9a-f]{12})/)?.[1];
  if (!id) return;
  history.replaceState(null, "", location.pathname + location.search);
  try {
    const run = await call(`/${id}`);
    const why = await app.importer.importText(run.config, `run ${id}'s config`);
    if (why) throw new Error(why);
    const declared = app.state.get("num_processes");
    if (run.world_size !== (Number.isInteger(declared) ? declared : 1)) app.setWorldSize(run.world_size);
  } catch (error) {
    const why = error.status || error instanceof TypeError ? explainError(error) : error.message;
    announce(el("span", { class: "error-text", text: `Could not open run ${id}'s config: ${why}` }));
  }
}
