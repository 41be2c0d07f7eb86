// Parley console: progressive enhancement of plain forms. Every form works
// without this script; with it, uploads show their progress and errors
// appear beside the form instead of on a new page.
"use strict";
(function () {
  const csrf = () => document.querySelector('meta[name="csrf-token"]').content;

  // Drop a file onto the drop zone to choose it.
  document.querySelectorAll("[data-drop]").forEach((zone) => {
    const input = zone.querySelector("input[type=file]");
    zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", (e) => {
      e.preventDefault(); zone.classList.remove("over");
      if (e.dataTransfer.files.length) input.files = e.dataTransfer.files;
    });
  });

  // Forms with a file go through XHR for its upload progress.
  document.querySelectorAll("form[data-upload]").forEach((form) => {
    const bar = form.querySelector("[data-progress]");
    const err = form.querySelector("[data-error]");
    const button = form.querySelector("button");
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      err.hidden = true; button.disabled = true; bar.hidden = false; bar.value = 0;
      const xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.setRequestHeader("Accept", "application/json");
      xhr.setRequestHeader("X-CSRF-Token", csrf());
      xhr.upload.addEventListener("progress", (p) => { if (p.lengthComputable) bar.value = p.loaded / p.total; });
      xhr.addEventListener("load", () => {
        let body = {};
        try { body = JSON.parse(xhr.responseText); } catch (_) { /* not JSON */ }
        if (xhr.status === 202 && body.location) { window.location.assign(body.location); return; }
        button.disabled = false; bar.hidden = true;
        err.textContent = body.error || xhr.statusText; err.hidden = false;
      });
      xhr.addEventListener("error", () => {
        button.disabled = false; bar.hidden = true;
        err.textContent = form.dataset.neterror || "Network error"; err.hidden = false;
      });
      xhr.send(new FormData(form));
    });
  });
})();
