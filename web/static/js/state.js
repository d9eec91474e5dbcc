// The config being edited: only keys the user (or an import, preset or fix) set explicitly, in insertion
// order, so an imported file keeps its order on export. Listeners hear which top-level keys changed.

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

  replace(mapping, source = "import") {
    const before = [...this.values.keys()];
    this.values = new Map(Object.entries(mapping || {}));
    this.emit([...before, ...this.values.keys()], source);
  }

  toObject() { return Object.fromEntries(this.values); }

  // Apply a diagnostic's fix: {"rename": {old: new}, "unset": [...], "set": {...}}; paths may be nested.
  applyFix(fix) {
    const touched = [];
    for (const [from, to] of Object.entries(fix.rename || {})) {
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
