// A YAML writer for the flat config format, used when the server cannot be reached (with the server up, the
// export goes through POST /api/v1/export, which keeps an imported file's comments). It writes what the
// validator's YAML 1.1 loader reads back as the same values: strings that would read as another type are quoted,
// floats keep a decimal point ("1.0e-06", not "1e-6", which YAML 1.1 reads as text).

const PLAIN = /^[A-Za-z_/][A-Za-z0-9_./@+-]*$/;
const RESERVED = /^(y|yes|n|no|true|false|on|off|null|nan|inf)$/i;

function number(value) {
  if (!Number.isFinite(value)) return value > 0 ? ".inf" : value < 0 ? "-.inf" : ".nan";
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return String(value);
  const text = String(value);
  if (!/[eE]/.test(text)) return text.includes(".") ? text : `${text}.0`;
  const [mantissa, exponent] = text.split(/[eE]/);
  const sign = exponent.startsWith("-") ? "-" : "+";
  const digits = exponent.replace(/^[-+]/, "").padStart(2, "0");
  return `${mantissa.includes(".") ? mantissa : `${mantissa}.0`}e${sign}${digits}`;
}

function scalar(value) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return number(value);
  const text = String(value);
  return PLAIN.test(text) && !RESERVED.test(text) ? text : JSON.stringify(text);
}

const isMap = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function lines(value, indent) {
  const pad = " ".repeat(indent);
  if (Array.isArray(value)) {
    if (!value.length) return null;
    return value.flatMap((item) => {
      const inner = (isMap(item) || Array.isArray(item)) ? lines(item, indent + 2) : null;
      if (!inner) return [`${pad}- ${isMap(item) ? "{}" : Array.isArray(item) ? "[]" : scalar(item)}`];
      return [`${pad}- ${inner[0].trimStart()}`, ...inner.slice(1)];
    });
  }
  if (isMap(value)) {
    const keys = Object.keys(value);
    if (!keys.length) return null;
    return keys.flatMap((key) => entry(key, value[key], indent));
  }
  return null;
}

function entry(key, value, indent) {
  const pad = " ".repeat(indent);
  const name = scalar(key);
  const inner = lines(value, indent + 2);
  if (inner) return [`${pad}${name}:`, ...inner];
  const empty = Array.isArray(value) ? "[]" : isMap(value) ? "{}" : scalar(value);
  if (typeof value === "string" && value.includes("\n")) return [`${pad}${name}: ${JSON.stringify(value)}`];
  return [`${pad}${name}: ${empty}`];
}

export function toYaml(config) {
  return Object.entries(config).flatMap(([key, value]) => entry(key, value, 0)).join("\n") + "\n";
}

// The toolbar's world size as num_processes, as the server's export does it (web/exporting.py).
export function withWorldSize(config, worldSize, write = true) {
  const declared = config.num_processes;
  if (!worldSize) {
    return [config, [Number.isInteger(declared) ? `World size ${declared}: num_processes is in the file.`
      : "No world size in the file: grpo validate and accelerate launch assume 1 process."]];
  }
  if (declared === worldSize) return [config, [`World size ${worldSize}: num_processes is in the file.`]];
  if (write) {
    return [{ ...config, num_processes: worldSize }, [`num_processes: ${worldSize} written for the toolbar's world ` +
      "size (grpo validate, grpo launch and accelerate launch read it)."]];
  }
  const current = declared !== undefined ? `num_processes: ${declared}` : "no num_processes (1 process)";
  return [config, [`The toolbar's world size ${worldSize} is NOT in this file (${current}): pass --world-size ` +
    `${worldSize} to grpo validate and --num_processes ${worldSize} to accelerate launch.`]];
}
