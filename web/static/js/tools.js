// What takes a config from the form to a job: the command that runs it, named configs kept in the browser,
// sharding (ZeRO / FSDP) as one choice that writes the config keys TRL and the runtime read (deepspeed, fsdp,
// fsdp_config), and the pickers under fields (reward names of the active registry, recent and local models and
// datasets, a few rows of a local dataset).

import * as api from "./api.js";
import { ask, el, onCommittedChange } from "./dom.js";
import { deleteConfig, recentValues, saveConfig, savedConfigs } from "./persist.js";

const $ = (id) => document.getElementById(id);
const FILE = "grpo-config.yaml";
const shellWord = (word) => (/^[\w./:=@-]+$/.test(word) ? word : `'${String(word).replace(/'/g, "'\\''")}'`);

// --- pickers -----------------------------------------------------------------------------------------------------
export function suggestions(app, field) {
  if (field.name === "reward_funcs") {
    const profile = app.profiles.find((p) => p.name === ($("profile").value || undefined));
    const names = profile ? profile.reward_funcs : app.trlRewards;
    const trl = app.trlRelease ? `TRL ${app.trlRelease}'s` : "TRL's";  // the picked release's script's names
    return { kind: "toggle", label: profile ? `${profile.name}'s rewards` : `${trl} built-in rewards`, values: names };
  }
  if (field.name === "model_name_or_path" || field.name === "dataset_name") {
    const local = (app.local?.[field.name === "dataset_name" ? "datasets" : "models"] || []);
    const values = [...recentValues(field.name).map((v) => ({ value: v, label: "recent" })),
                    ...local.map((v) => ({ value: v.name, label: v.where }))];
    return { kind: "datalist", values: values.filter((v, i) => values.findIndex((w) => w.value === v.value) === i) };
  }
  return null;
}

export async function loadLocal(app) {
  try {
    app.local = await api.getJSON("/api/v1/local");
  } catch { app.local = null; } // an older server, or offline: recent values only
}

// A few rows of the dataset named in dataset_name, when it is a local file or folder the server can read.
async function previewDataset(app) {
  const box = $("dataset-preview");
  const name = app.state.get("dataset_name");
  if (typeof name !== "string" || !name) { box.replaceChildren(el("p", { class: "muted", text: "Set dataset_name first." })); return; }
  try {
    const found = await api.getJSON(`/api/v1/local/preview?path=${encodeURIComponent(name)}`);
    const columns = found.columns || [];
    box.replaceChildren(el("p", { class: "muted small", text: `${found.path}: first ${found.rows.length} rows` }),
      el("div", { class: "table-scroll" }, el("table", { class: "preview" },
        el("thead", {}, el("tr", {}, columns.map((c) => el("th", { text: c })))),
        el("tbody", {}, found.rows.map((row) => el("tr", {}, columns.map((c) =>
          el("td", { text: typeof row[c] === "string" ? row[c] : JSON.stringify(row[c]) }))))))));
  } catch (exc) {
    box.replaceChildren(el("p", { class: "muted", text: `No preview: ${exc.message}` }));
  }
}

// --- the command -------------------------------------------------------------------------------------------------
function mixedPrecision(config) {
  return config.bf16 === true ? "bf16" : config.fp16 === true ? "fp16" : "no";
}

export function commands(config, worldSize, profile) {
  const n = worldSize || (Number.isInteger(config.num_processes) ? config.num_processes : 1);
  const mode = config.deepspeed ? "--use_deepspeed" : config.fsdp ? "--use_fsdp" : n > 1 ? "--multi_gpu" : null;
  const accelerate = ["accelerate", "launch", "--num_processes", n, "--num_machines", 1, "--dynamo_backend", "no",
                      "--mixed_precision", mixedPrecision(config), ...(mode ? [mode] : [])];
  const lines = [];
  if (profile === "open-r1") {
    lines.push({ what: "open-r1's script (from a checkout of huggingface/open-r1)",
                 line: [...accelerate.slice(0, 4), "src/open_r1/grpo.py", "--config", FILE] });
  }
  lines.push({ what: "grpo-config's trainer, as the service's runs start it", line: ["grpo", "launch", FILE, "--num-processes", n] },
             { what: "what grpo launch runs", line: [...accelerate, "-m", "grpo_runtime", FILE] },
             { what: "TRL's own script (keys it does not know go to accelerate launch)",
               line: ["trl", "grpo", "--config", FILE, ...(config.num_processes === n ? [] : ["--num_processes", n])] });
  return lines.map(({ what, line }) => ({ what, line: line.map(shellWord).join(" ") }));
}

function setupCommand(app, { worldSize, profile }) {
  const dialog = $("command-dialog");
  $("command-open").addEventListener("click", () => {
    const list = commands(app.state.toObject(), worldSize(), profile());
    $("command-list").replaceChildren(...list.map(({ what, line }, i) => el("li", {},
      el("p", { class: "muted small", text: what }),
      el("div", { class: "command-row" }, el("pre", { class: "command", tabindex: "0", text: line }),
        el("button", { type: "button", class: "copy", "data-line": i, text: "Copy", "aria-label": `Copy: ${what}`,
                       onclick: async (event) => {
                         const button = event.currentTarget;
                         await copyText(line);
                         button.textContent = "Copied";
                         $("command-note").textContent = `Copied: ${line}`;
                         setTimeout(() => { button.textContent = "Copy"; }, 1500);
                       } })))));
    $("command-note").textContent = `Export the config as ${FILE} first; the world size is ` +
      `${$("world-size").value ? "the toolbar's" : worldSize() ? "the file's # grpo: comment's"
        : "num_processes from the config, else 1"}.`;
    dialog.showModal();
  });
  $("command-close").addEventListener("click", () => dialog.close());
}

// The clipboard API needs a secure context (localhost is one) and permission; else the old way, from a click.
async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = el("textarea", { class: "visually-hidden" });
    area.value = text;
    $("command-dialog").append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
}

// --- named configs -----------------------------------------------------------------------------------------------
// Put a saved config (or the one from before it was opened, for Undo) in the form: its settings, world size,
// profile, TRL release, typed hardware and dataset size, so it is judged as it was when saved (the form reloads
// its schema for another profile or release). A config saved before the release and hardware were kept keeps the
// form's.
function openSaved(app, saved, source = "restore") {
  app.state.restore(saved, source);
  $("world-size").value = saved.worldSize || "";
  if ("datasetSize" in saved) $("dataset-size").value = saved.datasetSize || "";
  if ("hardware" in saved && saved.hardware !== $("hardware").value) app.memory.setTyped(saved.hardware || "");
  app.form.refreshAll();
  const release = saved.trlVersion ?? $("trl-version").value;
  const newRelease = release !== $("trl-version").value &&
    [...$("trl-version").options].some((o) => o.value === release);
  if (newRelease) {
    $("trl-version").value = release;
    app.release = release;
  }
  if ((saved.profile || "") !== $("profile").value || newRelease) {
    $("profile").value = saved.profile || "";
    $("profile").dispatchEvent(new Event("change"));
  }
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function setupSaved(app, { announce }) {
  const dialog = $("saved-dialog");
  const draw = () => {
    const all = savedConfigs();
    const names = Object.keys(all).sort();
    $("saved-list").replaceChildren(...(names.length ? names.map((name) => el("li", { "data-name": name },
      el("strong", { text: name }), " ",
      el("span", { class: "muted small",
                   text: `${plural(all[name].entries.length, "setting")}, ${new Date(all[name].savedAt).toLocaleString()}` }),
      " ",
      el("button", { type: "button", class: "load", text: "Open", "aria-label": `Open ${name}`, onclick: async () => {
        if (app.state.values.size && !(await ask({ title: `Open ${name}?`, confirm: "Open", cancel: "Keep my config",
          text: "This replaces the config in the form. Save it first if you want to keep it." }))) return;
        const before = app.draft();
        openSaved(app, all[name]);
        dialog.close();
        announce(el("span", {}, `Opened ${name} (${plural(all[name].entries.length, "setting")}). `,
          el("button", { type: "button", id: "undo-open", text: "Undo", onclick: () => {
            openSaved(app, before, "undo");
            announce(el("span", { text: `Back to your config from before opening ${name}.` }));
          } })));
      } }), " ",
      el("button", { type: "button", class: "delete", text: "Delete", "aria-label": `Delete ${name}`, onclick: async () => {
        if (await ask({ title: `Delete ${name}?`, text: "The saved config is removed from this browser.", confirm: "Delete" })) {
          deleteConfig(name);
          draw();
        }
      } }))) : [el("li", { class: "muted", text: "Nothing saved yet." })]));
  };
  $("saved-open").addEventListener("click", () => { draw(); $("saved-name").value = ""; dialog.showModal(); });
  $("saved-close").addEventListener("click", () => dialog.close());
  $("saved-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = $("saved-name").value.trim();
    if (!name) return;
    if (savedConfigs()[name] && !(await ask({ title: `Replace ${name}?`, confirm: "Replace",
      text: "A saved config has this name already." }))) return;
    saveConfig(name, app.draft());
    draw();
  });
}

// --- sharding ----------------------------------------------------------------------------------------------------
const OFFLOAD = { device: "cpu", pin_memory: true };

function deepspeedConfig(stage, offload) {
  const zero = { stage, overlap_comm: true, contiguous_gradients: true };
  if (offload && stage >= 1) zero.offload_optimizer = OFFLOAD;
  if (offload && stage === 3) zero.offload_param = OFFLOAD;
  if (stage === 3) zero.stage3_gather_16bit_weights_on_model_save = true;
  return { zero_optimization: zero, bf16: { enabled: "auto" }, fp16: { enabled: "auto" },
           train_micro_batch_size_per_gpu: "auto", gradient_accumulation_steps: "auto", gradient_clipping: "auto" };
}

// The `accelerate launch` keys a recipe may shard with instead of deepspeed / fsdp (trl grpo forwards them to the
// launcher; grpo_runtime.distributed.accelerate's SHARDING_LAUNCH_KEYS less config_file, a file of the user's own
// that may say more than the sharding). A choice in the select replaces them: one place says how the run shards.
const LAUNCH_SHARDING_KEYS = ["accelerate_config", "use_deepspeed", "zero_stage", "use_fsdp"];

// What the launch keys say: the bundled accelerate configs by name (zero1..zero3, fsdp1, fsdp2), or
// use_deepspeed / zero_stage, or use_fsdp; null when they say nothing about sharding.
function launchSharding(config) {
  const named = typeof config.accelerate_config === "string" ? config.accelerate_config : "";
  if (/^zero[123]$/.test(named)) return { choice: named, offload: false };
  if (/^fsdp[12]$/.test(named)) return { choice: "fsdp", offload: false };
  if (named && !["single_gpu", "multi_gpu"].includes(named)) return { choice: "custom", offload: false };
  if (config.zero_stage !== undefined && config.zero_stage !== null) {
    return { choice: [1, 2, 3].includes(config.zero_stage) ? `zero${config.zero_stage}` : "custom", offload: false };
  }
  if (config.use_deepspeed === true) return { choice: "custom", offload: false };
  if (config.use_fsdp === true) return { choice: "fsdp", offload: false };
  return null;
}

// The sharding the config has now: "none", "zero1".."zero3", "fsdp", or "custom" (set by hand in another way).
export function shardingOf(config) {
  const launched = launchSharding(config);
  if (launched && !config.deepspeed && !config.fsdp) return launched;
  if (config.deepspeed && typeof config.deepspeed === "object") {
    const stage = config.deepspeed.zero_optimization?.stage;
    const offload = Boolean(config.deepspeed.zero_optimization?.offload_optimizer);
    return { choice: [1, 2, 3].includes(stage) ? `zero${stage}` : "custom", offload };
  }
  if (config.deepspeed) return { choice: "custom", offload: false };
  if (config.fsdp) {
    const words = Array.isArray(config.fsdp) ? config.fsdp : String(config.fsdp).split(/\s+/);
    return { choice: "fsdp", offload: words.includes("offload") };
  }
  return { choice: "none", offload: false };
}

export function shardingFix(choice, offload) {
  const launch = LAUNCH_SHARDING_KEYS;
  if (choice === "none") return { unset: ["deepspeed", "fsdp", "fsdp_config", ...launch] };
  if (choice.startsWith("zero")) {
    return { set: { deepspeed: deepspeedConfig(Number(choice.slice(4)), offload) },
             unset: ["fsdp", "fsdp_config", ...launch] };
  }
  return { set: { fsdp: `full_shard auto_wrap${offload ? " offload" : ""}`,
                  fsdp_config: { fsdp_version: 2, reshard_after_forward: true } }, unset: ["deepspeed", ...launch] };
}

function setupSharding(app) {
  const select = $("sharding");
  const offload = $("sharding-offload");
  const show = () => {
    const now = shardingOf(app.state.toObject());
    if (now.choice === "custom" && ![...select.options].some((o) => o.value === "custom")) {
      select.append(el("option", { value: "custom", text: "custom (set in the config's own keys)", disabled: true }));
    }
    select.value = now.choice;
    offload.checked = now.offload;
    offload.disabled = now.choice === "none" || now.choice === "custom";
  };
  const write = () => {
    if (select.value === "custom") return;
    app.state.applyFix(shardingFix(select.value, offload.checked));
  };
  onCommittedChange(select, write);
  offload.addEventListener("change", write);
  app.state.onChange((keys) => {
    if (["deepspeed", "fsdp", "fsdp_config", ...LAUNCH_SHARDING_KEYS].some((k) => keys.has(k))) show();
  });
  show();
}

export function setupTools(app, hooks) {
  setupCommand(app, hooks);
  setupSaved(app, hooks);
  setupSharding(app);
  $("dataset-preview-open").addEventListener("click", () => previewDataset(app));
}
