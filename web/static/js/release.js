// Moving a config to a newer TRL release: the form offers `grpo migrate --from A --to B` (the server runs the same
// migrate code as the CLI) instead of leaving only the safe fixes, which rename and remove keys but do not keep the
// old release's defaults, so the run would silently train differently.

import * as api from "./api.js";
import { el } from "./dom.js";

// hooks: { state, versions: {default: {version}, releases: [...], migration_codes: [...]}, profile(),
//          announce(node), refresh() }
export class ReleaseMove {
  constructor(hooks) {
    this.hooks = hooks;
    // Keys the judged release no longer reads under their name (renamed: K002, removed: K003, ...): the diagnostics
    // whose fixes grpo migrate makes, so their presence means "migrate". The service sends the list migrate itself
    // uses (grpo_schema.commands.migrate.MIGRATION_CODES), so the offer and the migration cannot drift apart.
    this.oldKeyCodes = new Set(hooks.versions.migration_codes || []);
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
  offer(from, to, lead = "") {
    const { state, announce } = this.hooks;
    if (!state.values.size || !this.isNewer(to, from)) return;
    const [a, b] = [this.resolved(from), this.resolved(to)];
    announce(el("span", { class: "offer" }, lead,
      `This config was judged for TRL ${a}. Fixing its keys for TRL ${b} does not keep what ${a} did where a ` +
      "default changed; migrating writes those defaults out, as grpo migrate does. ",
      el("button", { type: "button", id: "migrate-release", text: `Migrate from TRL ${a} to ${b}`,
                     onclick: () => this.migrate(a, b) })));
  }

  // After every check: a config whose keys predate the release it is judged for (an old recipe imported at the
  // service's release, a 0.14-era file judged at 0.19) gets the migration `grpo migrate --from R --to J` makes, J the
  // judged release and R the one picked beside: the same file as the CLI and the editor's action. Drawn from each
  // answer, so it comes back after an Undo and goes once migrated.
  offerForKeys(result) {
    const [box, from, button] = ["migrate-offer", "migrate-from", "migrate-keys"].map((id) => document.getElementById(id));
    const releases = this.hooks.versions.releases || [];
    const judged = releases.find((r) => r === result?.trl_version || r.startsWith(`${result?.trl_version}.`));
    const old = (result?.diagnostics || []).filter((d) => this.oldKeyCodes.has(d.code) && d.fix)
      .flatMap((d) => d.fields || []);
    box.hidden = !(old.length && judged);
    if (box.hidden) return;
    // The release it was written for is the user's to say (the keys alone do not tell 0.16 from 0.19): the judged
    // one by default, which only renames and removes; an older one also writes out its defaults the judged one
    // changed. A later one than the judged is no choice: migrate goes forward only.
    const older = releases.slice(0, releases.indexOf(judged) + 1);
    if (from.dataset.releases !== older.join(" ")) {
      from.replaceChildren(...older.map((r) => el("option", { value: r, text: r })));
      from.dataset.releases = older.join(" ");
      from.value = judged;
    }
    button.textContent = `Migrate to TRL ${judged}`;
    button.title = `Keys of an older TRL release (${old.join(", ")}): migrate renames and removes them as ` +
      `grpo migrate --from (the release picked beside) --to ${judged} does, leaving a comment where a removal ` +
      "needs a decision, and writes out that release's defaults the judged one changed.";
    button.onclick = () => this.migrate(from.value || judged, judged);
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
      const back = "Back to your config from before the migration. ";
      announce(el("span", { text: back }));
      this.offer(from, to, back);  // a move between releases offers its migration again
    } });
    const lines = [
      ...answer.done.map((line) => el("li", { text: line })),
      ...answer.cannot_keep.map((line) => el("li", { class: "warn", text: `TRL ${answer.target} cannot keep: ${line}` })),
      ...answer.failed.map((line) => el("li", { class: "warn", text: `not migrated: ${line}` })),
    ];
    const moved = from === answer.target ? `Migrated to TRL ${from}` : `Migrated from TRL ${from} to ${answer.target}`;
    const releases = this.hooks.versions.releases || [];
    const toFlag = answer.target === releases[releases.length - 1] ? "" : ` --to ${answer.target}`;
    announce(el("span", {}, `${moved}, as grpo migrate --from ${from}${toFlag} does. `,
      undo, el("ul", { class: "notes", id: "migrate-notes" }, lines)));
  }
}
