// Text <-> value for each widget kind. Parsing is deliberately forgiving: whatever cannot be read as the field's
// type is sent as text, so the server reports it with the same diagnostic the CLI would give.

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const INTEGER = /^[-+]?\d+$/;

function allows(accepts, type) {
  return accepts.types.has(type) || accepts.types.has("any") ||
    accepts.choices.some((c) => typeof c === (type === "integer" ? "number" : type));
}

export function parseScalar(text, accepts) {
  const t = text.trim();
  if (t === "null" && accepts.types.has("null")) return null;
  if ((t === "true" || t === "false") && allows(accepts, "boolean")) return t === "true";
  if (INTEGER.test(t) && (allows(accepts, "integer") || allows(accepts, "number"))) {
    const n = Number(t);
    return Number.isSafeInteger(n) ? n : t;
  }
  if (NUMBER.test(t) && allows(accepts, "number")) return Number(t);
  if (NUMBER.test(t) && allows(accepts, "integer")) return Number(t); // 2.5 for an integer: let the server say so
  return text;
}

function itemAccepts(accepts) {
  return { types: new Set(accepts.itemTypes.size ? accepts.itemTypes : ["string"]), choices: [],
           itemTypes: new Set() };
}

function parseList(text, accepts) {
  if (text.trim().startsWith("[")) {
    try { return JSON.parse(text); } catch { /* not JSON: read it as comma-separated */ }
  }
  const items = text.split(",").map((s) => s.trim()).filter(Boolean);
  const single = !text.includes(",") && items.length === 1;
  if (single && (accepts.types.has("string") || accepts.choices.length)) return parseScalar(items[0], accepts);
  if (single && accepts.types.has("boolean") && /^(true|false)$/.test(items[0])) return items[0] === "true";
  return items.map((item) => parseScalar(item, itemAccepts(accepts)));
}

function parseJson(text, accepts) {
  try {
    return JSON.parse(text);
  } catch {
    return parseScalar(text, accepts);
  }
}

function parseMap(text) {
  const out = {};
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const at = line.indexOf("=");
    if (at < 1) return text; // not KEY=VALUE: the server reports the type
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

// The value for the text in a widget; undefined means "not set" (the default applies).
export function parseText(field, text) {
  if (text.trim() === "") return undefined;
  switch (field.kind) {
    case "list": return parseList(text, field.accepts);
    case "json": return parseJson(text, field.accepts);
    case "map": return parseMap(text);
    default: return parseScalar(text, field.accepts);
  }
}

// A number as people write it in a config: 3e-6 for a learning rate, not JavaScript's 0.000003 (which it writes
// for anything from 1e-6 on); whole numbers and ordinary fractions as they are.
export function formatNumber(value) {
  if (!Number.isFinite(value) || value === 0 || Number.isInteger(value)) return String(value);
  const magnitude = Math.abs(value);
  return magnitude < 1e-4 || magnitude >= 1e21 ? value.toExponential().replace("e+", "e") : String(value);
}

export function formatValue(field, value) {
  if (value === undefined) return "";
  if (typeof value === "number") return formatNumber(value);
  if (field.kind === "map" && value && typeof value === "object" && !Array.isArray(value)) {
    return Object.entries(value).map(([k, v]) => `${k}=${v}`).join("\n");
  }
  const scalarList = Array.isArray(value) && value.every((v) => v === null || typeof v !== "object");
  if (field.kind === "list" && scalarList && value.every((v) => !String(v).includes(","))) {
    return value.map((v) => (typeof v === "number" ? formatNumber(v) : String(v))).join(", ");
  }
  if (value !== null && typeof value === "object") return JSON.stringify(value);
  if (field.kind === "json" && typeof value === "string") return value;
  return value === null ? "null" : String(value);
}

export function sameValue(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// Select options carry JSON so that true, "true" and 1 stay distinct.
export const encodeChoice = (value) => JSON.stringify(value);
export const decodeChoice = (text) => (text === "" ? undefined : JSON.parse(text));
