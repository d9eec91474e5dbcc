// Live validation: edits are debounced (~300 ms), an older request is aborted when a newer one starts, and only
// the newest answer is drawn. Each round trip (request to drawn result) is recorded for the page's metrics.
// When the server cannot be reached, the checker says so (onResult(null, error, {offline: true})) and tries again
// on its own, every RETRY_MS at first and less often later, until an answer comes.

import * as api from "./api.js";

export const DEBOUNCE_MS = 300;
export const RETRY_MS = [1000, 2000, 3000, 5000];

export class Checker {
  constructor({ state, options, onResult, onBusy, metrics }) {
    Object.assign(this, { state, options, onResult, onBusy, metrics });
    this.timer = null;
    this.controller = null;
    this.sequence = 0;
    this.failures = 0;
    this.retryTimer = null;
  }

  get offline() { return this.failures > 0; }

  schedule(delay = DEBOUNCE_MS) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), delay);
  }

  async run() {
    clearTimeout(this.timer);
    clearTimeout(this.retryTimer);
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const sequence = ++this.sequence;
    const started = performance.now();
    const config = this.state.toObject();
    const options = this.options();
    this.onBusy(true);
    try {
      // One request: the explain document carries validate's file object fields plus the schedule.
      const explained = await api.explain(config, options, controller.signal);
      if (sequence !== this.sequence) return;
      this.failures = 0;
      this.onResult(explained);
      const now = performance.now();
      // ms: request to drawn; sinceEdit: the user's last keystroke to drawn (includes the debounce)
      const sinceEdit = this.metrics.lastEditAt == null ? null : now - this.metrics.lastEditAt;
      this.metrics.validations.push({ ms: now - started, sinceEdit, at: now });
      this.metrics.lastEditAt = null;
      document.body.dataset.validations = String(this.metrics.validations.length);
    } catch (exc) {
      if (exc.name !== "AbortError" && sequence === this.sequence) {
        const offline = api.unreachable(exc);
        if (offline) {
          const wait = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)];
          this.failures += 1;
          this.retryTimer = setTimeout(() => this.run(), wait);
        }
        this.onResult(null, exc, { offline });
      }
    } finally {
      if (sequence === this.sequence) this.onBusy(false);
    }
  }
}
