// Launch: post the config in the form to POST /api/v1/runs and go to the runs page. The service validates it
// again and applies its run policy; a refusal comes back as diagnostics, shown in the dialog.

import { el } from "./dom.js";
import { explainError, getToken, launch, setToken } from "./runs-api.js";
import { setupSmoke } from "./smoke.js";

const $ = (id) => document.getElementById(id);

function showRefusal(list, document) {
  const errors = document.diagnostics.filter((d) => d.severity === "error");
  list.replaceChildren(...errors.slice(0, 20).map((d) => el("li", { class: "diag error" },
    el("span", { class: "code", text: d.code }), " ", el("strong", { text: d.fields.join(", ") }), " ",
    d.message, d.hint ? el("div", { class: "hint", text: d.hint }) : null)));
}

export function setupLaunch(currentConfig, currentWorldSize) {
  const dialog = $("launch-dialog");
  const message = $("launch-error");
  const list = $("launch-diagnostics");
  setupSmoke(currentConfig);
  $("launch-open").addEventListener("click", () => {
    message.textContent = "";
    list.replaceChildren();
    $("launch-token").value = getToken();
    dialog.showModal();
  });
  $("launch-cancel").addEventListener("click", () => dialog.close());
  $("launch-apply").addEventListener("click", async () => {
    message.textContent = "";
    list.replaceChildren();
    setToken($("launch-token").value);
    try {
      const created = await launch(currentConfig(), currentWorldSize());
      location.assign(`/runs#run=${created.id}`);
    } catch (error) {
      if (error.status === 422 && error.body && Array.isArray(error.body.diagnostics)) {
        message.textContent = "The service will not run this config:";
        showRefusal(list, error.body);
      } else {
        message.textContent = explainError(error);
      }
    }
  });
}
