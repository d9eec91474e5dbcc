// The runs endpoints, with the bearer token. The token stays in this tab (sessionStorage). The link that
// `grpo serve` prints hands it over in the URL fragment (#token=...), which browsers never send to a server.

const KEY = "grpo-runs-token";

export function takeTokenFromUrl() {
  const found = location.hash.match(/(?:^#|&)token=([^&]*)/);
  if (!found) return;
  setToken(decodeURIComponent(found[1]));
  const rest = location.hash.slice(1).split("&").filter((part) => !part.startsWith("token=")).join("&");
  history.replaceState(null, "", location.pathname + location.search + (rest ? `#${rest}` : ""));
}

export const getToken = () => sessionStorage.getItem(KEY) || "";
export const setToken = (token) => sessionStorage.setItem(KEY, token.trim());

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
  if (!response.ok) {
    let payload = null;
    try { payload = await response.json(); } catch { /* not JSON */ }
    throw new RunsError(response.status, payload?.detail ?? response.statusText, payload);
  }
  return raw ? response : response.json();
}

// existing: "resume" or "overwrite" when the output_dir belongs to another run (GRPO-X007), else undefined.
export function launch(config, worldSize, existing) {
  const q = new URLSearchParams();
  if (worldSize) q.set("world_size", worldSize);
  if (existing) q.set("existing_output", existing);
  return call(q.toString() ? `?${q}` : "", {
    method: "POST", body: JSON.stringify(config), headers: { "Content-Type": "application/json" },
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
  if (error.status === 401) return "The service refused the token. Paste the token `grpo serve` printed.";
  if (error.status === 403) return error.message;
  return `Runs request failed: ${error.message}`;
}
