// Moving a config to a newer TRL release: the form offers `grpo migrate --from A --to B` (the server runs the same
// migrate code as the CLI) instead of leaving only the safe fixes, which rename and remove keys but do not keep the
// old release's defaults, so the run would silently train differently.

import * as api from "./api.js";
import { el } from "./dom.js";

// hooks: { state, versions: {default: {version}, releases: [...]}, profile(), announce(node), refresh() }
export class ReleaseMove {
  constructor(hooks) {
    this.hooks = hooks;
  }

  // The release a picker value names: empty is the service's own.
  resolved(value) {
    return value || this.hooks.versions.default.version;
  }

  // The releases list comes sorted oldest first from the server.
  isNewer(to, from) {
    const order = this.hooks.versions.releases;
    const [a, b] = [order.indexOf(this.resolved(from)), order.indexOf(this.resolved(to))];
    return a >= 0 && b > a;
  }

  // Called when the picker moved from `from` to `to`, with the config already judged as `to`.
  offer(from, to) {
    const { state, announce } = this.hooks;
    if (!state.values.size || !this.isNewer(to, from)) return;
    const [a, b] = [this.resolved(from), this.resolved(to)];
    announce(el("span", { class: "offer" },
      `This config was judged for TRL ${a}. Fixing its keys for TRL ${b} does not keep what ${a} did where a ` +
      "default changed; migrating writes those defaults out, as grpo migrate does. ",
      el("button", { type: "button", id: "migrate-release", text: `Migrate from TRL ${a} to ${b}`,
                     onclick: () => this.migrate(a, b) })));
  }

  async migrate(from, to) {
    const { state, announce, refresh, profile } = this.hooks;
    let answer;
    try {
      answer = await api.migrate({ config: state.toObject(), source: state.source, renames: state.renames,
                                   from, to }, profile());
    } catch (exc) {
      announce(el("span", { text: `Could not migrate: ${exc.message}` }));
      return;
    }
    if (answer.config === null) {
      announce(el("span", { text: "Could not migrate: the migrated file is not a mapping." }));
      return;
    }
    const before = state.snapshot();
    state.replace(answer.config, "migrate", answer.yaml, {},
                  { origin: state.origin ?? { kind: "file" }, fileSettings: answer.settings, fileNotes: [] });
    refresh();
    const undo = el("button", { type: "button", id: "undo-migrate", text: "Undo", onclick: () => {
      state.restore(before, "undo");
      refresh();
      announce(el("span", { text: "Back to your config from before the migration." }));
    } });
    const lines = [
      ...answer.done.map((line) => el("li", { text: line })),
      ...answer.cannot_keep.map((line) => el("li", { class: "warn", text: `TRL ${answer.target} cannot keep: ${line}` })),
      ...answer.failed.map((line) => el("li", { class: "warn", text: `not migrated: ${line}` })),
    ];
    announce(el("span", {}, `Migrated from TRL ${from} to ${answer.target}, as grpo migrate --from ${from} does. `,
      undo, el("ul", { class: "notes", id: "migrate-notes" }, lines)));
  }
}
