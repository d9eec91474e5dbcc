// The form for the profile and TRL release picked: their schema and reward names (each asked once; a failed request
// is forgotten, so it is asked again), the sections built from them, and the profile offers of the notice.

import * as api from "./api.js";
import { count, el } from "./dom.js";
import { sectionsFromSchema } from "./fields.js";
import { announce } from "./notice.js";
import { FormView } from "./sections.js";
import { suggestions } from "./tools.js";

const $ = (id) => document.getElementById(id);

const FIRST_OPEN = ["model", "batch"];
const schemas = new Map(); // profile -> schema; a failed request is forgotten, so it is asked again
const rewardNames = new Map(); // release -> its script's reward names, kept the same way

export const profileName = () => $("profile").value || undefined;
export const trlVersion = () => $("trl-version").value || undefined;

export function schemaFor(profile, release) {
  const key = `${profile || ""} ${release || ""}`;
  if (!schemas.has(key)) {
    const q = new URLSearchParams();
    if (profile) q.set("profile", profile);
    if (release) q.set("trl_version", release);
    const url = `/api/v1/schema${q.toString() ? `?${q}` : ""}`;
    schemas.set(key, api.getJSON(url).catch((exc) => { schemas.delete(key); throw exc; }));
  }
  return schemas.get(key);
}

// The reward names the release's `trl grpo` resolves (the reward_funcs picker), asked once per release.
export function rewardsFor(release) {
  const key = release || "";
  if (!rewardNames.has(key)) {
    const url = `/api/v1/rewards${release ? `?trl_version=${encodeURIComponent(release)}` : ""}`;
    rewardNames.set(key, api.getJSON(url).catch((exc) => { rewardNames.delete(key); throw exc; }));
  }
  return rewardNames.get(key);
}

export function currentFilter() {
  return { query: $("search").value, onlyChanged: $("only-changed").checked };
}

// The form for the active profile's schema (a profile adds its script keys as a section).
export async function buildForm(app) {
  const [schema, names] = await Promise.all([schemaFor(profileName(), trlVersion()),
                                             rewardsFor(trlVersion()).catch(() => app.trlRewards || [])]);
  app.trlRewards = names;
  app.trlRelease = trlVersion();
  const sections = sectionsFromSchema(schema);
  // The offline export's modeline: the schema file by its name, as the server writes it (relative to the YAML).
  const profile = profileName();
  app.schemaId = typeof schema.$id === "string" ? schema.$id
    : profile ? `grpo-config.${profile}.schema.json` : "grpo-config.schema.json";
  const opened = app.form ? app.form.sections.filter((s) => s.node.open).map((s) => s.id) : FIRST_OPEN;
  app.form = new FormView($("sections"), sections, app.state, currentFilter(), (field) => suggestions(app, field));
  app.form.onFiltered = (shown, active) => { $("filter-count").textContent = active ? count(shown, "matching field") : ""; };
  for (const s of app.form.sections) if (opened.includes(s.id)) s.node.open = true;
  app.form.applyVisibility();
  app.form.updateCounts();
  if (app.diags) app.diags.setForm(app.form);
}

export async function setProfile(app, name) {
  const previous = app.profile || ""; // the select shows the new choice already
  $("profile").value = name || "";
  app.save(); // at once: a reload while the schema is on its way keeps the choice
  try {
    await buildForm(app);
  } catch (exc) {
    $("profile").value = previous;
    app.save();
    app.checker.run();
    announce(el("span", { text: `Could not load the ${name || "default"} schema: ${exc.message}` }));
    return;
  }
  app.profile = name || "";
  withdrawOffer(name);
  app.checker.run();
}

// The notice's "Use the NAME profile" offer is done with once that profile is in use, whichever button or select
// applied it; the rest of the notice (the import and its Undo) stays.
export function withdrawOffer(name) {
  if (!name) return;
  document.getElementById(`use-profile-${name}`)?.closest(".offer")?.remove();
  if (!$("notice").textContent.trim()) announce(null);
}

// The profiles a file uses, as a button each (the validator's own CLI flag is --profile NAME); `keep`: added to
// what the notice says already. An offer, not the page's primary button (Export stays the one).
export function offerProfiles(app, found, keep = false) {
  const wanted = found.filter((p) => p.name !== profileName());
  if (!wanted.length) return;
  const previous = keep ? [...$("notice").childNodes] : [];
  announce(el("span", {}, ...previous, ...wanted.map((p) => el("span", { class: "offer" },
    `This file uses ${p.name}'s ${[p.keys.length ? `script keys (${p.keys.slice(0, 4).join(", ")})` : "",
      p.reward_funcs.length ? `reward names (${p.reward_funcs.join(", ")})` : ""].filter(Boolean).join(" and ")}. `,
    el("button", { type: "button", id: `use-profile-${p.name}`, text: `Use the ${p.name} profile`,
                   onclick: () => { announce(null); setProfile(app, p.name); } })))));
}
