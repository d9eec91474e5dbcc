// The runs endpoints, with the bearer token. The token stays in this tab (sessionStorage). The link that
// `grpo serve` prints hands it over in the URL fragment (#token=...), which browsers never send to a server.

import { toYaml } from "./yamlwrite.js";

const KEY = "grpo-runs-token";

export function takeTokenFromUrl() {
  const found = location.hash.match(/(?:^#|&)token=([^&]*)/);
  if (!found) return;
  setToken(decodeURIComponent(found[1]));
  const rest = location.hash.slice(1).split("&").filter((part) => !part.startsWith("token=")).join("&");
  history.replaceState(null, "", location.pathname + location.search + (rest ? `#${rest}` : ""));
}

export const getToken = () => sessionStorage.getItem(KEY) || "";
export const setToken = (token) => {
  sessionStorage.setItem(KEY, token.trim());
  sessionStorage.removeItem(REFUSED);
  sessionStorage.removeItem(ACCEPTED);
};

// A token the service refuses is forgotten at once (never sent again), and the tab remembers why it has none: the
// token went stale (the service had taken it, then was started again with a new one), or it was never the service's
// (a link or a paste from an earlier start): the form and the runs page say which, and what to do, until a new
// token is given.
const ACCEPTED = "grpo-runs-token-accepted";
const REFUSED = "grpo-runs-token-stale";
export const tokenWasRefused = () => Boolean(sessionStorage.getItem(REFUSED));
function forgetRefusedToken() {
  sessionStorage.setItem(REFUSED, sessionStorage.getItem(ACCEPTED) === "1" ? "stale" : "wrong");
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(ACCEPTED);
}
export const STALE_TOKEN = "The service no longer accepts the token this tab had: it was started again with a " +
  "new one. Paste the token that grpo serve printed at its last start (or open the link it printed).";
export const WRONG_TOKEN = "The service refused the token this tab was given: it is not the one the service was " +
  "started with (a link or token from an earlier start of grpo serve?). Paste the token that grpo serve printed " +
  "at its last start (or open the link it printed then); a service started without GRPO_WEB_TOKEN keeps it in " +
  "the file named token in its runs directory.";
// What to say while the tab has no token because the service refused the one it had ("" when none was refused).
export const refusedTokenText = () => ({ stale: STALE_TOKEN, wrong: WRONG_TOKEN })[sessionStorage.getItem(REFUSED)] || "";

// Whether the service takes the tab's token: "ok", "refused" (then it is forgotten), "none" (the tab has none) or
// "unknown" (no answer).
export async function checkToken() {
  if (!getToken()) return "none";
  try {
    await call("?limit=1");
    return "ok";
  } catch (error) {
    return error.status === 401 ? "refused" : "unknown";
  }
}

export class RunsError extends Error {
  constructor(status, detail, body) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
    this.body = body;
  }
}

export async function call(path, { method = "GET", body, headers = {}, raw = false } = {}) {
  const url = path.startsWith("/api/") ? path : `/api/v1/runs${path}`;  // a runs-family route outside /runs
  const response = await fetch(url, {
    method, body, cache: "no-store", headers: { ...headers, Authorization: `Bearer ${getToken()}` },
  });
  if (response.ok && getToken()) sessionStorage.setItem(ACCEPTED, "1");
  if (!response.ok) {
    if (response.status === 401 && getToken()) forgetRefusedToken();
    let payload = null;
    try { payload = await response.json(); } catch { /* not JSON */ }
    throw new RunsError(response.status, payload?.detail ?? response.statusText, payload);
  }
  return raw ? response : response.json();
}

// existing: "resume" or "overwrite" when the output_dir belongs to another run (GRPO-X007), else undefined.
// hardware: what the config's file declared in a `# grpo: --hardware` comment (the form checked it on that): the run's
// record keeps it as that comment over the config written as YAML (a JSON mapping has no place for it), so "Edit in
// the form" from the runs page brings the config back with its hardware.
export function launch(config, worldSize, existing, hardware) {
  const q = new URLSearchParams();
  if (worldSize) q.set("world_size", worldSize);
  if (existing) q.set("existing_output", existing);
  const declared = typeof hardware === "string" && /^[^\s#]+$/.test(hardware);
  return call(q.toString() ? `?${q}` : "", {
    method: "POST",
    body: declared ? `# grpo: --hardware ${hardware}\n${toYaml(config)}` : JSON.stringify(config),
    headers: { "Content-Type": declared ? "application/yaml" : "application/json" },
  });
}

// No answer at all: fetch() rejects with a TypeError ("Failed to fetch") when the service is down or the network
// is; a proxy in front of a stopped service answers 502-504.
const unreachable = (error) => error instanceof TypeError || (error.status >= 502 && error.status <= 504);

// What to tell a person when a runs call fails.
export function explainError(error) {
  if (unreachable(error)) {
    return "The service cannot be reached: it has stopped, or the network is down. Start it again " +
      "(grpo serve --enable-runs) and try again; your config is kept in this browser.";
  }
  if (error.status === 401) {
    return "The service refused the token: it is not the one this service started with. Paste the token that " +
      "grpo serve printed at its last start (a service started without GRPO_WEB_TOKEN keeps it in the file " +
      "named token in its runs directory).";
  }
  if (error.status === 403) return error.message;
  if (error.status === 404) return `Not on this service: ${error.message}. Pick a run from the list.`;
  return `Runs request failed: ${error.message}`;
}
