// Field descriptors from the JSON Schema: one per top-level property, grouped by the schema's x-group hints.
// Everything the form shows about a field comes from here, so new schema keywords need no form changes
// beyond reading them in this file.

const SCALAR_TYPES = ["boolean", "integer", "number", "string", "null"];

function resolver(defs) {
  return (p) => (p && p.$ref ? defs[p.$ref.split("/").pop()] || {} : p || {});
}

function alternatives(prop, resolve) {
  const own = resolve(prop);
  const list = own.anyOf || own.oneOf;
  return list ? list.map(resolve) : [own];
}

// Each branch of a property, with the kinds of value its list items may take.
function branchesOf(prop, defs) {
  const resolve = resolver(defs);
  return alternatives(prop, resolve).map((b) => ({ ...b, itemTypes: b.items ? itemTypes(b.items, resolve) : [] }));
}

function itemTypes(items, resolve) {
  return alternatives(items, resolve).flatMap((i) => {
    if (i.enum) return i.enum.map((v) => typeof v);
    if (i.properties || i.type === "object") return ["object"];
    return i.type ? [i.type] : [];
  });
}

// What a property accepts, as flags the widgets and the value parser read.
function acceptance(branches) {
  const accepts = { types: new Set(), choices: [], itemTypes: new Set(), mapOfStrings: false };
  for (const b of branches) {
    if (b.enum) accepts.choices.push(...b.enum);
    else if ("const" in b) accepts.choices.push(b.const);
    else if (b.type === "array") {
      accepts.types.add("array");
      b.itemTypes.forEach((t) => accepts.itemTypes.add(t));
    } else if (b.type === "object" || b.properties) {
      accepts.types.add("object");
      const extra = b.additionalProperties;
      accepts.mapOfStrings = !!(extra && extra.type === "string");
    } else if (b.type) accepts.types.add(b.type);
    else accepts.types.add("any");
  }
  return accepts;
}

function widgetKind(accepts) {
  const t = accepts.types;
  const open = ["integer", "number", "string", "array", "object", "any"].some((x) => t.has(x));
  if (!open && (accepts.choices.length || t.has("boolean"))) return "select";
  if (t.has("object")) return accepts.mapOfStrings && t.size === 1 ? "map" : "json";
  // A list of mappings (datasets) is edited as JSON; a list of scalars as comma-separated text.
  if (t.has("array")) return accepts.itemTypes.has("object") || accepts.itemTypes.has("array") ? "json" : "list";
  return "scalar";
}

function choicesOf(accepts) {
  const values = [...accepts.choices];
  if (accepts.types.has("boolean")) values.push(true, false);
  return values.filter((v, i) => values.findIndex((w) => w === v) === i && v !== null);
}

function textOf(prop, key) {
  return typeof prop[key] === "string" ? prop[key] : "";
}

export function fieldFromProperty(name, prop, index, defs) {
  const accepts = acceptance(branchesOf(prop, defs));
  const kind = widgetKind(accepts);
  return {
    name,
    index,
    kind,
    accepts,
    choices: kind === "select" ? choicesOf(accepts) : [],
    enumDocs: prop.enumDescriptions || prop.markdownEnumDescriptions || prop["x-enumDescriptions"] || null,
    hasDefault: "default" in prop,
    default: prop.default,
    description: textOf(prop, "description") || textOf(prop, "markdownDescription"),
    deprecated: !!(prop.deprecated || prop.deprecationMessage),
    deprecation: textOf(prop, "deprecationMessage"),
    group: prop["x-group"] || "other",
    groupTitle: prop["x-group-title"] || prop["x-group"] || "Other",
    order: typeof prop["x-order"] === "number" ? prop["x-order"] : index,
    advanced: prop["x-advanced"] === true,
    searchText: [name, prop.title, prop.description, prop["x-group-title"]].join(" ").toLowerCase(),
  };
}

// Sections in the order of the schema's x-groups (then first appearance), fields inside by x-order.
export function sectionsFromSchema(schema) {
  const defs = schema.$defs || schema.definitions || {};
  const byGroup = new Map();
  for (const g of schema["x-groups"] || []) {
    byGroup.set(g.id, { id: g.id, title: g.title || g.id, summary: g.summary || "", fields: [] });
  }
  Object.entries(schema.properties || {}).forEach(([name, prop], index) => {
    const field = fieldFromProperty(name, prop, index, defs);
    if (!byGroup.has(field.group)) {
      byGroup.set(field.group, { id: field.group, title: field.groupTitle, summary: "", fields: [] });
    }
    byGroup.get(field.group).fields.push(field);
  });
  const sections = [...byGroup.values()].filter((s) => s.fields.length);
  for (const s of sections) s.fields.sort((a, b) => a.order - b.order || a.index - b.index);
  return sections;
}

// A field for a key the schema does not have (a typo, a profile's script key): any YAML scalar or JSON.
export function looseField(name) {
  const accepts = { types: new Set([...SCALAR_TYPES, "array", "object"]), choices: [], itemTypes: new Set(),
                    mapOfStrings: false };
  return { name, index: Infinity, kind: "json", accepts, choices: [], enumDocs: null, hasDefault: false,
           default: undefined, description: "Not in the schema: a misspelled key, or a script argument of a " +
           "profile. The value is read as JSON, else kept as text.", deprecated: false, deprecation: "",
           group: "other-keys", groupTitle: "Other keys", order: 0, advanced: false, searchText: name, loose: true };
}

export function matchesQuery(field, query) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return words.every((w) => field.searchText.includes(w));
}
