// Launch: post the config in the form to POST /api/v1/runs and go to the runs page. The service validates it
// again and applies its run policy; a refusal comes back as diagnostics, shown in the dialog with their fixes.
// While the form's own check already says the service would refuse the config (an error, or its run policy),
// the dialog says so, lists why with the fixes ("Use world size N", ...) and keeps Launch off until they are
// fixed. When the output_dir belongs to another run (GRPO-X007), the dialog offers the three ways on: resume
// that run, overwrite its outputs, or give this run a folder of its own.

import { ask, el } from "./dom.js";
import { explainError, getToken, launch, setToken } from "./runs-api.js";
import { setupDoctor } from "./doctor.js";
import { setupEmit } from "./emitspec.js";
import { setupSmoke } from "./smoke.js";

const $ = (id) => document.getElementById(id);
const OWNED = "GRPO-X007";

// "output_dir '/x' belongs to run 3f2a... (failed)" -> "3f2a..."; a busy folder (queued or running) has no owner
// to resume or overwrite.
const ownerIn = (diag) => /belongs to run ([0-9a-f]+)/.exec(diag.message || "")?.[1] || null;

// hooks: { config(), worldSize(), trlVersion(), profile(), hardware(), diags (DiagnosticsView), checker,
//          onLaunched(config), onConfigChange(listener) }
export function setupLaunch(hooks) {
  const dialog = $("launch-dialog");
  const message = $("launch-error");
  const blocked = $("launch-blocked");
  const list = $("launch-diagnostics");
  const choices = $("launch-choices");
  const apply = $("launch-apply");
  let refusal = null; // the service's last 422 while the dialog is open
  setupSmoke(hooks);
  setupDoctor(hooks);
  setupEmit(hooks);

  const showList = (diagnostics) => {
    list.replaceChildren(...diagnostics.slice(0, 20).map((d) => el("li", {}, hooks.diags.diagNode(d))));
  };

  // The form's verdict, redrawn whenever a new one comes (a fix made in this dialog included).
  const drawVerdict = () => {
    const verdict = hooks.diags.verdict;
    const button = $("launch-open");
    const why = verdict.blocking.length
      ? `The service would refuse this config: ${verdict.blocking.length} problem${verdict.blocking.length === 1 ? "" : "s"}` +
        ` at world size ${verdict.worldSize}. Fix ${verdict.blocking.length === 1 ? "it" : "them"} below, then launch.`
      : "";
    button.dataset.blocked = why ? "true" : "false";
    button.title = why || "launch a run of this config on the service";
    if (!dialog.open || refusal) return;
    blocked.textContent = why;
    apply.disabled = Boolean(why);
    showList(verdict.blocking);
    if (!dialog.contains(document.activeElement)) (apply.disabled ? list.querySelector("button") || $("launch-cancel") : apply).focus();
  };
  const previous = hooks.diags.onVerdict;
  hooks.diags.onVerdict = (verdict) => {
    previous?.(verdict);
    if (dialog.open && refusal) { // the config changed since the service refused it (a fix was made)
      refusal = null;
      message.textContent = "";
      choices.hidden = true;
    }
    drawVerdict();
  };

  const reset = () => {
    message.textContent = "";
    blocked.textContent = "";
    list.replaceChildren();
    choices.replaceChildren();
    choices.hidden = true;
    refusal = null;
  };

  $("launch-open").addEventListener("click", () => {
    reset();
    $("launch-token").value = getToken();
    dialog.showModal();
    drawVerdict();
  });
  $("launch-cancel").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", reset);

  // The ways on when the output_dir is another run's.
  const offerChoices = (diag) => {
    const owner = ownerIn(diag);
    const buttons = [];
    if (owner) {
      buttons.push(el("button", { type: "button", id: "launch-resume", class: "primary", text: "Resume that run",
        title: `continue run ${owner} from its last complete checkpoint`, onclick: () => go("resume") }));
      buttons.push(el("button", { type: "button", id: "launch-overwrite", text: "Overwrite", onclick: async () => {
        if (await ask({ id: "overwrite-dialog", title: `Overwrite run ${owner}'s outputs?`, confirm: "Overwrite",
          cancel: "Keep them", text: `The checkpoints and model of run ${owner} in this output_dir are deleted ` +
            "before the new run starts there. Its metrics, completions, health and log stay its own on the runs page." }))
          go("overwrite");
      } }));
    }
    buttons.push(el("button", { type: "button", id: "launch-new-folder", text: "Use a new folder",
      title: "leave output_dir unset: the run trains into a folder of its own under the runs directory",
      onclick: () => { hooks.diags.onFix({ unset: ["output_dir"] }); go(undefined); } }));
    choices.replaceChildren(...buttons);
    choices.hidden = false;
    buttons[0].focus();
  };

  const go = async (existing) => {
    message.textContent = "";
    setToken($("launch-token").value);
    const config = hooks.config();
    try {
      const created = await launch(config, hooks.worldSize(), existing);
      hooks.onLaunched?.(config);
      location.assign(`/runs#run=${created.id}`);
    } catch (error) {
      if (error.status === 422 && error.body && Array.isArray(error.body.diagnostics)) {
        refusal = error.body;
        const errors = error.body.diagnostics.filter((d) => d.severity === "error");
        const owned = errors.find((d) => d.code === OWNED);
        message.textContent = owned ? (ownerIn(owned) ? `This output_dir belongs to run ${ownerIn(owned)}: a new run ` +
          "there would overwrite its checkpoints and model. Choose how to go on:" : "Another run is writing to " +
          "this output_dir now. Give this run a folder of its own:") : "The service will not run this config:";
        showList(owned ? errors.filter((d) => d !== owned) : errors);
        if (owned) offerChoices(owned);
      } else {
        message.textContent = error.status === 409 ? `Cannot resume: ${error.message}` : explainError(error);
      }
    }
  };
  apply.addEventListener("click", () => go(undefined));
}
