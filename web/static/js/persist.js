// What the form keeps in the browser (localStorage, this origin only): the draft being edited, so reload, Back,
// the Runs link and Launch -> Back come back to the same config; named configs the user saved; and recent values
// of the model and dataset fields. Nothing here is sent anywhere.

const DRAFT = "grpo-form-draft";
const SAVED = "grpo-form-saved";
const RECENT = "grpo-form-recent";
const RECENT_KEEP = 8;

function read(key, fallback) {
  try {
    const value = JSON.parse(localStorage.getItem(key));
    return value ?? fallback;
  } catch {
    return fallback; // unreadable (edited by hand, or another version): start afresh
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
    return true;
  } catch {
    return false; // storage full or disabled: the form still works, it just cannot keep the draft
  }
}

// draft: { entries: [[key, value]...], source, renames, worldSize, profile, datasetSize, savedAt }
export const loadDraft = () => {
  const draft = read(DRAFT, null);
  return draft && Array.isArray(draft.entries) ? draft : null;
};
export const saveDraft = (draft) => write(DRAFT, { ...draft, savedAt: new Date().toISOString() });

export const savedConfigs = () => read(SAVED, {});
export function saveConfig(name, draft) {
  const all = savedConfigs();
  all[name] = { ...draft, savedAt: new Date().toISOString() };
  return write(SAVED, all);
}
export function deleteConfig(name) {
  const all = savedConfigs();
  delete all[name];
  write(SAVED, all);
}

export const recentValues = (field) => read(RECENT, {})[field] || [];
export function rememberValue(field, value) {
  if (typeof value !== "string" || !value.trim()) return;
  const all = read(RECENT, {});
  all[field] = [value, ...(all[field] || []).filter((v) => v !== value)].slice(0, RECENT_KEEP);
  write(RECENT, all);
}
