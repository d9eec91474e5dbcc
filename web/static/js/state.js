// The config being edited: only keys the user (or an import, preset or fix) set explicitly, in insertion
// order, so an imported file keeps its order on export. Listeners hear which top-level keys changed.
// `source` is the imported file's text and `renames` the keys renamed since: the export writes the edits into
// that text, so its comments and order stay. `origin` says where that text came from ({kind: "file"} or
// {kind: "recipe", name, title}), `fileSettings` what its `# grpo:` comment declares (world size, hardware, ...:
// the form checks the config as `grpo validate` checks the file) and `fileNotes` what only the text showed
// (duplicate keys, an unreadable comment).

export function topKey(fieldName) {
  return String(fieldName).split(/[.[]/)[0];
}

// "datasets[0].path" -> ["datasets", 0, "path"]; "env.HF_HOME" -> ["env", "HF_HOME"]
function pathOf(name) {
  const parts = [];
  for (const piece of String(name).split(".")) {
    const [head, ...indices] = piece.split("[");
    parts.push(head, ...indices.map((i) => Number.parseInt(i, 10)));
  }
  return parts;
}

export class ConfigState {
  constructor() {
    this.values = new Map();
    this.listeners = [];
    this.source = null;
    this.renames = {};
    this.origin = null;
    this.fileSettings = null;
    this.fileNotes = [];
  }

  onChange(listener) { this.listeners.push(listener); }

  emit(keys, source) { for (const l of this.listeners) l(new Set(keys), source); }

  get(key) { return this.values.get(key); }

  has(key) { return this.values.has(key); }

  set(key, value, source = "input") {
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, value);
    this.emit([key], source);
  }

  // A new config (import, recipe, restore); `file` is the imported text, or null when there is none; `meta`:
  // { origin, fileSettings, fileNotes } of that text.
  replace(mapping, source = "import", file = null, renames = {}, meta = {}) {
    const before = [...this.values.keys()];
    this.values = new Map(Array.isArray(mapping) ? mapping : Object.entries(mapping || {}));
    this.source = file;
    this.renames = { ...renames };
    this.origin = file === null ? null : meta.origin ?? null;
    this.fileSettings = file === null ? null : meta.fileSettings ?? null;
    this.fileNotes = Array.isArray(meta.fileNotes) ? meta.fileNotes : [];
    this.emit([...before, ...this.values.keys()], source);
  }

  // Everything needed to come back to this exact state (undo, the saved draft).
  snapshot() {
    return { entries: structuredClone([...this.values.entries()]), source: this.source, renames: { ...this.renames },
             origin: this.origin, fileSettings: this.fileSettings, fileNotes: this.fileNotes };
  }

  restore(snap, source = "restore") {
    this.replace(snap.entries, source, snap.source ?? null, snap.renames || {},
                 { origin: snap.origin, fileSettings: snap.fileSettings, fileNotes: snap.fileNotes });
  }

  toObject() { return Object.fromEntries(this.values); }

  // Rename a top-level key where it stands, so the key order (and the exported file's) does not change.
  renameKey(from, to) {
    if (!this.values.has(from) || this.values.has(to)) return false;
    this.values = new Map([...this.values].map(([k, v]) => [k === from ? to : k, v]));
    const original = Object.keys(this.renames).find((k) => this.renames[k] === from) || from;
    this.renames[original] = to;
    return true;
  }

  // Apply a diagnostic's fix: {"rename": {old: new}, "unset": [...], "set": {...}}; paths may be nested.
  applyFix(fix) {
    const touched = [];
    for (const [from, to] of Object.entries(fix.rename || {})) {
      if (!from.includes(".") && !from.includes("[") && !to.includes(".") && this.renameKey(from, to)) {
        touched.push(from, to);
        continue;
      }
      const value = this.getPath(from);
      this.deletePath(from);
      if (value !== undefined) this.setPath(to, value);
      touched.push(topKey(from), topKey(to));
    }
    for (const name of fix.unset || []) { this.deletePath(name); touched.push(topKey(name)); }
    for (const [name, value] of Object.entries(fix.set || {})) { this.setPath(name, value); touched.push(topKey(name)); }
    this.emit(touched, "fix");
  }

  getPath(name) {
    let node = this.toObject();
    for (const part of pathOf(name)) node = node == null ? undefined : node[part];
    return node;
  }

  setPath(name, value) {
    const [head, ...rest] = pathOf(name);
    if (!rest.length) { this.values.set(head, value); return; }
    const root = structuredClone(this.values.get(head) ?? (typeof rest[0] === "number" ? [] : {}));
    let node = root;
    rest.slice(0, -1).forEach((part, i) => {
      if (node[part] == null || typeof node[part] !== "object") node[part] = typeof rest[i + 1] === "number" ? [] : {};
      node = node[part];
    });
    node[rest[rest.length - 1]] = value;
    this.values.set(head, root);
  }

  deletePath(name) {
    const [head, ...rest] = pathOf(name);
    if (!rest.length || !this.values.has(head)) { this.values.delete(head); return; }
    const root = structuredClone(this.values.get(head));
    let node = root;
    for (const part of rest.slice(0, -1)) { node = node?.[part]; }
    const last = rest[rest.length - 1];
    if (Array.isArray(node)) node.splice(last, 1);
    else if (node && typeof node === "object") delete node[last];
    this.values.set(head, root);
  }
}
