// What a file's `# grpo:` comment (or a recipe) declares, against what was typed in the form's own controls: the
// world size and hardware it takes over (each with its undo), the profile and release it names, and the world size
// the config is checked at.

const $ = (id) => document.getElementById(id);

// A positive whole number from an optional input, else undefined (and the input is marked invalid).
// A number typed in the toolbar or the schedule panel: a whole number from 1 to max, else not used, and the line
// beside it (INPUT-error) says so, rather than a verdict "at world size 1" that silently drops what was typed.
export function positiveOption(input, max = Number.MAX_SAFE_INTEGER) {
  const text = input.value.trim();
  const value = Number(text);
  const ok = text === "" || (Number.isInteger(value) && value >= 1 && value <= max);
  input.setAttribute("aria-invalid", ok ? "false" : "true");
  const error = document.getElementById(`${input.id}-error`);
  if (error) {
    error.hidden = ok;
    error.textContent = ok ? "" : `${JSON.stringify(text)} is not a whole number ` +
      `${max === Number.MAX_SAFE_INTEGER ? "of 1 or more" : `from 1 to ${max}`}: not used until it is one`;
  }
  return ok && text !== "" ? value : undefined;
}

export const worldSize = () => positiveOption($("world-size"), 4096);

// A config that declares its own hardware (a hardware: section, a # grpo: --hardware comment) takes the memory panel
// over what was typed there: the typed value goes, and the notice says so; its undo() brings the typed value back.
export function yieldTypedHardware(app, config, settings) {
  const typed = $("hardware").value.trim();
  const own = settings?.hardware ?? config?.hardware;
  if (!typed || own === undefined || own === null) return null;
  app.memory.setTyped("");
  const spec = typeof own === "string" ? own : own.spec ?? "its hardware: section";
  return { say: `Its hardware (${spec}) replaces the ${typed} typed in the memory panel. `,
           undo: () => app.memory.setTyped(typed) };
}

// A recipe that declares its world size (num_processes, a # grpo: --world-size comment) takes the toolbar over what
// was typed there, as an import does: the typed value goes, and the notice says so; its undo() brings it back.
export function yieldTypedWorldSize(config, settings) {
  const typed = $("world-size").value.trim();
  const own = settings?.world_size ?? config?.num_processes;
  if (!typed || !Number.isInteger(own) || String(own) === typed) return null;
  $("world-size").value = "";
  return { say: `Its world size (${own}) replaces the ${typed} typed in the toolbar. `,
           undo: () => { $("world-size").value = typed; } };
}

// What a recipe or import took over from what was typed, as one {say, undo()} (or null: nothing).
export function joinTaken(...taken) {
  const found = taken.filter(Boolean);
  return found.length ? { say: found.map((t) => t.say).join(""), undo: () => found.forEach((t) => t.undo()) } : null;
}

// The world size the config is checked at, as `grpo validate` picks it for the file: the toolbar's (a flag),
// else the file's `# grpo: --world-size N` comment, else num_processes in the config (the server reads that).
export function effectiveWorldSize(app) {
  return worldSize() ?? app.state.fileSettings?.world_size ?? undefined;
}

// The toolbar's placeholder shows what an empty world size means for this config; its description says where
// that number comes from.
export function showWorldSizeSource(app) {
  const commented = app.state.fileSettings?.world_size;
  const declared = app.state.get("num_processes");
  const [value, where] = commented ? [commented, "the file's # grpo: --world-size comment"]
    : Number.isInteger(declared) ? [declared, "num_processes in the config"] : [1, "nothing declares one"];
  $("world-size").placeholder = String(value);
  $("world-size").title = `empty: ${value} (${where})`;
  $("world-size-help").textContent = `Training processes over all machines; empty: ${value}, from ${where}`;
}

// The settings a file's `# grpo:` comment declares, taken by the form's own controls: its profile and TRL release
// (when the form knows them). The world size and hardware are read from the state where they are needed.
export function takeFileSettings(settings) {
  if (!settings) return false;
  let changed = false;
  const profile = settings.profiles?.[0];
  if (profile && profile !== $("profile").value && [...$("profile").options].some((o) => o.value === profile)) {
    $("profile").value = profile;
    changed = true;
  }
  // `--trl-version 0.19` names the picker's 0.19.1 (the tables keep the last patch of each minor)
  const release = settings.trl_version;
  const option = release && [...$("trl-version").options].find((o) => o.value && (o.value === release ||
    o.value.startsWith(`${release}.`)));
  if (option && option.value !== $("trl-version").value) {
    $("trl-version").value = option.value;
    changed = true;
  }
  return changed;
}
