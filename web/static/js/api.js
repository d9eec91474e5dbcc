// The service's endpoints, as small async functions. Errors carry the server's `detail`.

export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
  }
}

async function answer(response, as = "json") {
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail; } catch { /* not JSON */ }
    throw new ApiError(response.status, detail);
  }
  return as === "text" ? response.text() : response.json();
}

export const getJSON = (url) => fetch(url).then((r) => answer(r));

// True when the server could not be reached at all (as opposed to an answer that refused something).
export const unreachable = (error) => error instanceof TypeError || (error instanceof ApiError && error.status >= 502);

// allowEnv and hardware: what the imported file's `# grpo:` comment declares (--allow-env, --hardware), so the
// mapping the form sends is checked as `grpo validate` checks the file.
function checkQuery({ worldSize, profile, datasetSize, launch, trlVersion, allowEnv, hardware } = {}) {
  const q = new URLSearchParams();
  for (const name of allowEnv || []) q.append("allow_env", name);
  if (hardware) q.set("hardware", hardware);
  if (worldSize) q.set("world_size", worldSize);
  if (profile) q.append("profile", profile);
  if (trlVersion) q.set("trl_version", trlVersion);
  if (datasetSize) q.set("dataset_size", datasetSize);
  if (launch) q.set("launch", "true");
  const text = q.toString();
  return text ? `?${text}` : "";
}

function postJSON(url, body, signal) {
  return fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
                      signal });
}

export const explain = (config, options, signal) =>
  postJSON(`/api/v1/explain${checkQuery(options)}`, config, signal).then((r) => answer(r));

export const toYaml = (config, profile) =>
  postJSON(`/api/v1/yaml${checkQuery({ profile })}`, config).then((r) => answer(r, "text"));

// The form's config as YAML: written into the imported file (`source`) when there is one; {yaml, notes}.
export const exportYaml = (request, profile) =>
  postJSON(`/api/v1/export${checkQuery({ profile })}`, request).then((r) => answer(r));

// `grpo migrate --from A --to B` on the form's config: {yaml, config, settings, done, failed, cannot_keep, target}.
export const migrate = (request, profile) =>
  postJSON(`/api/v1/migrate${checkQuery({ profile })}`, request).then((r) => answer(r));

export const healthy = () => fetch("/healthz", { cache: "no-store" }).then((r) => r.ok, () => false);

export const loadFile = (text) =>
  fetch("/api/v1/load", { method: "POST", headers: { "Content-Type": "application/yaml" }, body: text })
    .then((r) => answer(r));

// grpo doctor on the service's own interpreter (the one its runs use), for the features this config uses.
export const doctor = (config, options) =>
  postJSON(`/api/v1/doctor${checkQuery(options)}`, config).then((r) => answer(r));

// `grpo convert --to verl` on the form's config: {text, lossy, refused, world_size}.
export const convertToVerl = (request) => postJSON("/api/v1/convert", request).then((r) => answer(r));
