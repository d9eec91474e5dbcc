// Launch: post the config in the form to POST /api/v1/runs and go to the runs page. The service validates it
// again and applies its run policy; a refusal comes back as diagnostics, shown in the dialog with their fixes.
// While the form's own check already says the service would refuse the config (an error, or its run policy),
// the dialog says so, lists why with the fixes ("Use world size N", ...) and keeps Launch off until they are
// fixed. When the output_dir belongs to another run (GRPO-X007), the dialog offers the three ways on: resume
// that run, overwrite its outputs, or give this run a folder of its own.

import { ask, el } from "./dom.js";
import { checkToken, explainError, getToken, launch, refusedTokenText, setToken, takeTokenFromUrl,
         tokenWasRefused } from "./runs-api.js";
import { setupDoctor } from "./doctor.js";
import { setupEmit } from "./emitspec.js";
import { setupSmoke } from "./smoke.js";

const $ = (id) => document.getElementById(id);
const OWNED = "GRPO-X007";

// "output_dir '/x' belongs to run 3f2a... (failed)" -> "3f2a..."; a busy folder (queued or running) has no owner
// to resume or overwrite.
const ownerIn = (diag) => /belongs to run ([0-9a-f]+)/.exec(diag.message || "")?.[1] || null;

// What a service without runs says instead of asking for a token it never printed.
export const RUNS_OFF = "Runs are off on this service: its operator starts it with grpo serve --enable-runs (or " +
  "GRPO_WEB_RUNS=1), which prints the token and a link with it. Until then, Command… shows how to run this config " +
  "yourself, and the spec below runs it on a cluster.";

// hooks: { config(), worldSize(), trlVersion(), profile(), hardware(), fileHardware(), runsOn(), diags (DiagnosticsView), checker,
//          onLaunched(config), onConfigChange(listener) }
export function setupLaunch(hooks) {
  const dialog = $("launch-dialog");
  const message = $("launch-error");
  const blocked = $("launch-blocked");
  const list = $("launch-diagnostics");
  const choices = $("launch-choices");
  const apply = $("launch-apply");
  let refusal = null; // the service's last 422 while the dialog is open
  let refusedConfig = ""; // the config it refused (as JSON): a verdict on the same config keeps the ways on shown
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
    const off = hooks.runsOn?.() === false;
    const why = off ? RUNS_OFF : verdict.blocking.length
      ? `The service would refuse this config: ${verdict.blocking.length} problem${verdict.blocking.length === 1 ? "" : "s"}` +
        ` at world size ${verdict.worldSize}. Fix ${verdict.blocking.length === 1 ? "it" : "them"} below, then launch.`
      : "";
    button.dataset.blocked = why ? "true" : "false";
    button.title = why || "launch a run of this config on the service";
    if (!dialog.open || refusal) return;
    blocked.textContent = why;
    apply.disabled = Boolean(why);
    showList(off ? [] : verdict.blocking);
    if (!dialog.contains(document.activeElement)) (apply.disabled ? list.querySelector("button") || $("launch-cancel") : apply).focus();
  };
  const previous = hooks.diags.onVerdict;
  hooks.diags.onVerdict = (verdict) => {
    previous?.(verdict);
    // the config changed since the service refused it (a fix was made); a late verdict on the same config (an
    // import's second check) leaves the refusal and its ways on as they are
    if (dialog.open && refusal && JSON.stringify(hooks.config()) !== refusedConfig) {
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
    apply.classList.add("primary");
    refusal = null;
  };

  // The token: the tab's (from the link `grpo serve` printed, or pasted before), checked with the service as the
  // dialog opens; one it refuses (the service was started again with a new one) is cleared and asked for once.
  const tokenState = $("launch-token-state");
  const askForToken = (why) => {
    $("launch-token").value = "";
    tokenState.textContent = why;
    tokenState.className = "error-text small";
    $("launch-token").focus();
  };
  const showToken = async () => {
    const off = hooks.runsOn?.() === false;
    $("launch-token").disabled = off;
    if (off) { tokenState.textContent = ""; return; } // no token exists to paste: the dialog says why
    $("launch-token").value = getToken();
    tokenState.className = "muted small";
    tokenState.textContent = getToken() ? "" : "Paste the token that grpo serve --enable-runs printed (opening " +
      "the link it printed hands it to this page).";
    if (tokenWasRefused() && !getToken()) { askForToken(refusedTokenText()); return; }
    const verdict = await checkToken();
    if (!dialog.open) return;
    if (verdict === "ok") tokenState.textContent = "The service accepts the token this tab has.";
    if (verdict === "refused") {
      askForToken(tokenWasRefused() ? refusedTokenText() : "The service refuses the token this tab has: paste the one " +
        "grpo serve printed at its last start.");
    }
  };
  takeTokenFromUrl();
  $("launch-open").addEventListener("click", () => {
    reset();
    dialog.showModal();
    showToken();
    drawVerdict();
  });
  $("launch-cancel").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", reset);

  // The ways on when the output_dir is another run's: resume it (first, when that trains anything), overwrite its
  // outputs, or launch this run into a folder of its own. A run that trained all its steps has nothing to resume
  // (GRPO-A014): a new run comes first, Resume says why it is off, and raising max_steps to go on is one click.
  // `owner`: the service's output_owner ({id, state, resume: {possible, reason, max_steps}}), when it sent one.
  const offerChoices = (diag, owner) => {
    const id = owner?.id || ownerIn(diag);
    const resume = owner?.resume;
    const kept = hooks.config().output_dir;
    const fresh = el("button", { type: "button", id: "launch-new-folder", text: "Launch into a new folder",
      title: `this run only: it trains into a folder of its own under the runs directory; the form keeps ` +
        `output_dir: ${kept}`, onclick: () => go(undefined, { newFolder: true }) });
    if (!id) { choices.replaceChildren(fresh); choices.hidden = false; fresh.focus(); return; }
    const resumeButton = el("button", { type: "button", id: "launch-resume", text: "Resume that run",
      title: resume?.possible === false ? resume.reason : `continue run ${id} from its last complete checkpoint` +
        (resume?.checkpoint ? ` (${resume.checkpoint})` : ""),
      disabled: resume?.possible === false, onclick: () => go("resume") });
    const overwrite = el("button", { type: "button", id: "launch-overwrite", text: "Overwrite", onclick: async () => {
      if (await ask({ id: "overwrite-dialog", title: `Overwrite run ${id}'s outputs?`, confirm: "Overwrite",
        cancel: "Keep them", text: `The checkpoints and model of run ${id} in this output_dir are deleted ` +
          "before the new run starts there. Its metrics, completions, health and log stay its own on the runs page." }))
        go("overwrite");
    } });
    const stuck = resume?.possible === false;
    const buttons = stuck ? [fresh, overwrite, resumeButton] : [resumeButton, overwrite, fresh];
    buttons[0].classList.add("primary");
    const why = stuck ? el("p", { id: "launch-resume-why", class: "muted small" }, `Resume is off: ${resume.reason}.`,
      resume.max_steps ? el("button", { type: "button", id: "launch-continue", class: "link",
        text: `Set max_steps to ${resume.max_steps} and resume run ${id}`,
        onclick: () => { hooks.diags.onFix({ set: { max_steps: resume.max_steps } }); go("resume"); } }) : null) : null;
    choices.replaceChildren(...buttons, why || "", differencesNote(id, owner?.differences));
    apply.classList.remove("primary"); // one primary button: the first way on, not a Launch that is refused again
    choices.hidden = false;
    buttons[0].focus();
  };

  // A resume trains on from that run's checkpoint with the form's settings: say where they differ from that run's.
  const differencesNote = (id, differences) => {
    if (!Array.isArray(differences)) return "";
    const shown = (value) => (value === null || value === undefined ? "not set" : JSON.stringify(value));
    if (!differences.length) {
      return el("p", { id: "launch-differences", class: "muted small", text: `This config is run ${id}'s config.` });
    }
    const keys = differences.length === 1 ? "1 key" : `${differences.length} keys`;
    return el("div", { id: "launch-differences", class: "small" },
      el("p", { text: `Resume trains on from run ${id}'s checkpoint with this form's config, which differs from ` +
        `that run's in ${keys}:` }),
      el("ul", {}, ...differences.slice(0, 12).map((d) => el("li", { "data-key": d.key },
        el("code", { text: d.key }), `: ${shown(d.this)} here, ${shown(d.that)} in run ${id}`))),
      differences.length > 12 ? el("p", { class: "muted", text: `and ${differences.length - 12} more` }) : "");
  };

  // newFolder: this run only trains into a folder of its own (the form's output_dir stays as it is).
  const go = async (existing, { newFolder = false } = {}) => {
    message.textContent = "";
    setToken($("launch-token").value);
    const config = hooks.config();
    if (newFolder) delete config.output_dir;
    try {
      const created = await launch(config, hooks.worldSize(), existing, hooks.fileHardware?.());
      hooks.onLaunched?.(config);
      location.assign(`/runs#run=${created.id}`);
    } catch (error) {
      if (error.status === 422 && error.body && Array.isArray(error.body.diagnostics)) {
        refusal = error.body;
        refusedConfig = JSON.stringify(hooks.config());
        const errors = error.body.diagnostics.filter((d) => d.severity === "error");
        const owned = errors.find((d) => d.code === OWNED);
        message.textContent = owned ? (ownerIn(owned) ? `This output_dir belongs to run ${ownerIn(owned)}: a new run ` +
          "there would overwrite its checkpoints and model. Choose how to go on:" : "Another run is writing to " +
          "this output_dir now. Give this run a folder of its own:") : "The service will not run this config:";
        showList(owned ? errors.filter((d) => d !== owned) : errors);
        if (owned) offerChoices(owned, error.body.output_owner);
      } else {
        message.textContent = error.status === 409 ? `Cannot resume: ${error.message}` : explainError(error);
        if (error.status === 401) askForToken("Paste the token again: the one given was refused.");
      }
    }
  };
  apply.addEventListener("click", () => go(undefined));
}
