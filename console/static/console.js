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

  // The subtitle form's still-frame preview: a frame of the chosen video
  // drawn in the page with the style's font, size, colours, position and
  // margin, sized as the burn sizes them (rules/subtitles: Resolve and the
  // ASS style) so the person sees the style before paying for a burn.
  const fig = document.querySelector("[data-preview]");
  if (fig) {
    const form = fig.closest("form");
    const canvas = fig.querySelector("canvas");
    const video = document.createElement("video");
    video.muted = true; video.preload = "auto";
    let url = null;
    const val = (name) => form.elements[name].value;
    const draw = () => {
      if (!video.videoWidth) return;
      const scale = Math.min(1, 640 / video.videoWidth);
      canvas.width = Math.round(video.videoWidth * scale);
      canvas.height = Math.round(video.videoHeight * scale);
      const g = canvas.getContext("2d");
      g.drawImage(video, 0, 0, canvas.width, canvas.height);
      const share = Math.round(video.videoHeight * 0.05);
      const size = (parseFloat(val("fontSize")) || Math.max(8, share)) * scale;
      const margin = (val("marginV") === "" ? share : parseFloat(val("marginV"))) * scale;
      // libass sizes a font by its line height; the em is about 0.8 of it.
      g.font = `${Math.round(size * 0.8)}px "${val("font")}", sans-serif`;
      g.textAlign = "center";
      g.lineJoin = "round";
      const pos = val("position");
      let y;
      if (pos === "top") { g.textBaseline = "top"; y = margin; }
      else if (pos === "middle") { g.textBaseline = "middle"; y = canvas.height / 2; }
      else { g.textBaseline = "bottom"; y = canvas.height - margin; }
      const text = fig.dataset.sample;
      g.lineWidth = 2 * Math.max(1, size / 12);
      g.strokeStyle = val("outlineColor");
      g.strokeText(text, canvas.width / 2, y);
      g.fillStyle = val("primaryColor");
      g.fillText(text, canvas.width / 2, y);
      fig.hidden = false;
    };
    video.addEventListener("loadeddata", () => { video.currentTime = Math.min(1, video.duration / 2 || 0); });
    video.addEventListener("seeked", draw);
    const load = () => {
      const file = form.elements.file.files[0];
      if (!file) return;
      if (url) URL.revokeObjectURL(url);
      url = URL.createObjectURL(file);
      video.src = url;
    };
    form.elements.file.addEventListener("change", load);
    form.querySelector("[data-drop]").addEventListener("drop", () => setTimeout(load, 0));
    form.querySelectorAll("fieldset.style input, fieldset.style select").forEach((el) => el.addEventListener("input", draw));
  }

  // getJSON reads one of the console's own JSON answers.
  const getJSON = (url) => fetch(url, {headers: {Accept: "application/json"}, cache: "no-store"})
    .then((r) => r.ok ? r.json() : Promise.reject(r.status));

  // showStatus draws a status badge.
  const showStatus = (el, status, label) => { el.textContent = label; el.className = "status s-" + status; };

  // post sends a state-changing request of the page's own, with its token.
  const post = (url, body, headers = {}) => fetch(url, {method: "POST", body,
    headers: {Accept: "application/json", "X-CSRF-Token": csrf(), ...headers}});

  // every calls f once a second, or after 5 s when it failed; f's promise
  // resolving to true stops it.
  const every = (f) => {
    const tick = () => f().then((stop) => { if (!stop) setTimeout(tick, 1000); }, () => setTimeout(tick, 5000));
    setTimeout(tick, 1000);
  };

  // A job page polls its status once a second until the job ends, showing
  // its stage in the badge and the share done in the bar, then reloads to
  // show the result.
  const job = document.getElementById("job");
  if (job && job.dataset.final !== "true") {
    const label = document.getElementById("status");
    const bar = document.getElementById("live");
    every(() => getJSON(job.dataset.statusUrl).then((s) => {
      showStatus(label, s.status, s.label);
      if (bar) bar.value = s.fraction;
      if (s.final) window.location.reload();
      return s.final;
    }));
  }

  // A batch's page follows its recipients once a second until every one
  // has its delivery outcome: the status and counts move until then.
  const batch = document.getElementById("batch");
  if (batch && batch.dataset.final !== "true") {
    const bar = document.getElementById("live");
    every(() => getJSON(batch.dataset.statusUrl).then((s) => {
      showStatus(document.getElementById("status"), s.status, s.label);
      document.getElementById("sent").textContent = s.sent;
      document.getElementById("failed").textContent = s.failed;
      document.getElementById("opted-out").textContent = s.optedOut;
      document.getElementById("waiting").textContent = s.waiting;
      document.getElementById("canceled").textContent = s.canceled;
      document.getElementById("price").textContent = s.price;
      document.getElementById("eta").hidden = !s.eta;
      document.getElementById("eta-at").textContent = s.eta;
      if (bar) { bar.value = s.sent + s.failed + s.canceled + s.optedOut; if (s.final) bar.hidden = true; }
      const cancel = document.getElementById("cancel-form");
      if (cancel && s.final) cancel.hidden = true;
      for (const [id, r] of Object.entries(s.rows)) {
        const row = document.getElementById("r-" + id);
        if (!row) continue;
        showStatus(row.querySelector("[data-status]"), r.status, r.label);
        row.querySelector("[data-error]").textContent = r.error;
      }
      if (s.final) batch.dataset.final = "true";
      return s.final;
    }));
  }

  // The send form shows the message's characters, segments, encoding and
  // price as the server computes them, a moment after each change.
  const send = document.querySelector("form[data-estimate]");
  if (send) {
    const out = document.getElementById("estimate");
    let timer = null, seq = 0;
    const estimate = () => {
      const n = ++seq;
      const body = new FormData(send);
      post(send.dataset.estimate, body)
        .then((r) => r.json().then((j) => ({ok: r.ok, j})))
        .then(({ok, j}) => {
          if (n !== seq) return;
          out.textContent = ok ? j.summary : j.error;
          out.classList.toggle("error", !ok);
        })
        .catch(() => { /* the estimate is a help; the send checks again */ });
    };
    const later = () => { clearTimeout(timer); timer = setTimeout(estimate, 300); };
    send.addEventListener("input", later);
    send.addEventListener("change", later);
    send.querySelector("[data-drop]").addEventListener("drop", () => setTimeout(later, 0));
    estimate();
  }

  // The inbox redraws its list once a second, so a new message shows
  // without a reload.
  const threads = document.getElementById("threads");
  if (threads) {
    const body = threads.querySelector("tbody");
    const empty = document.getElementById("empty");
    every(() => getJSON(threads.dataset.poll).then((j) => {
      body.replaceChildren(...j.threads.map((t) => {
        const tr = document.createElement("tr");
        tr.id = "t-" + t.id;
        if (t.unread) tr.className = "unread";
        const cell = (text) => { const td = document.createElement("td"); td.textContent = text; tr.append(td); return td; };
        const a = document.createElement("a");
        a.href = "/console/sms/threads/" + t.id; a.dir = "ltr"; a.textContent = t.who;
        cell("").append(a);
        cell(t.number).dir = "ltr";
        cell(t.when);
        const badge = cell("");
        if (t.unread) { const b = document.createElement("span"); b.className = "badge"; b.textContent = t.unread; badge.append(b); }
        return tr;
      }));
      empty.hidden = j.threads.length > 0;
      return false;
    }));
  }

  // An open thread shows new messages as they arrive and marks them read.
  const messages = document.getElementById("messages");
  if (messages) {
    // Once the thread is read, its "Mark as read" has nothing left to do.
    const markRead = () => post(messages.dataset.read, new URLSearchParams({action: "read"})).then((r) => {
      const button = document.getElementById("mark-read");
      if (r.ok && button) button.hidden = true;
    }, () => { /* the next poll tries again */ });
    if (messages.dataset.unread !== "0") markRead();
    every(() => getJSON(messages.dataset.poll).then((j) => {
      let added = false;
      for (const m of j.messages) {
        if (document.getElementById("m-" + m.id)) continue;
        const li = document.createElement("li");
        li.id = "m-" + m.id; li.className = "msg new " + m.direction;
        const p = document.createElement("p"); p.dir = "auto"; p.textContent = m.body;
        const meta = document.createElement("span"); meta.className = "hint"; meta.textContent = m.when + " · " + m.status;
        li.append(p, meta);
        messages.append(li);
        added = true;
      }
      if (added) { messages.lastElementChild.scrollIntoView({block: "nearest"}); }
      if (j.unread > 0) markRead();
      return false;
    }));
  }

  // Click a word of a transcript to play the media from it; the word being
  // spoken is marked as it plays.
  const words = document.getElementById("words");
  const player = document.getElementById("player");
  if (words && player) {
    const spans = Array.from(words.querySelectorAll(".w"));
    words.addEventListener("click", (e) => {
      const w = e.target.closest(".w");
      if (!w) return;
      player.currentTime = parseFloat(w.dataset.start);
      player.play().catch(() => { /* autoplay may be refused; the position is set */ });
    });
    let marked = null;
    player.addEventListener("timeupdate", () => {
      const t = player.currentTime;
      let cur = null;
      for (const s of spans) { if (parseFloat(s.dataset.start) <= t) cur = s; else break; }
      if (cur !== marked) { if (marked) marked.classList.remove("now"); if (cur) cur.classList.add("now"); marked = cur; }
    });
  }

  // A link to a moment (a search hit: ...#t=12.3) starts the page's player
  // there and marks the word said then.
  const seek = () => {
    const m = /^#t=(\d+(?:\.\d+)?)$/.exec(window.location.hash);
    const media = player || document.getElementById("video");
    if (!m || !media) return;
    const t = parseFloat(m[1]);
    media.currentTime = t;
    if (!words) return;
    let hit = null;
    for (const s of words.querySelectorAll(".w")) { if (parseFloat(s.dataset.start) <= t + 0.005) hit = s; else break; }
    words.querySelectorAll(".hit").forEach((s) => s.classList.remove("hit"));
    if (hit) { hit.classList.add("hit"); hit.scrollIntoView({ block: "center" }); }
  };
  seek();
  window.addEventListener("hashchange", seek);

  // A secret shown once: the button copies it; nothing keeps it.
  document.querySelectorAll("[data-copy]").forEach((b) => b.addEventListener("click", () => {
    const field = document.querySelector(b.dataset.copy);
    field.select();
    if (navigator.clipboard) navigator.clipboard.writeText(field.value).then(() => { b.textContent = b.dataset.done; });
  }));

  // Push notifications: subscribe this browser with the server's VAPID key
  // and hand the subscription to the console, or say why it cannot.
  const push = document.getElementById("push");
  if (push) {
    const button = document.getElementById("push-subscribe");
    const msg = document.getElementById("push-message");
    const say = (text) => { msg.textContent = text; msg.hidden = false; };
    const supported = window.isSecureContext && "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
    if (supported) {
      // Mark the row of this browser's own subscription.
      navigator.serviceWorker.getRegistration(push.dataset.worker)
        .then((reg) => reg && reg.pushManager.getSubscription())
        .then((sub) => {
          if (!sub) return;
          document.querySelectorAll("#subscriptions tr[data-endpoint]").forEach((row) => {
            if (row.dataset.endpoint === sub.endpoint) row.querySelector(".this-browser").hidden = false;
          });
        }).catch(() => { /* nothing to mark */ });
    }
    if (button && !supported) { button.disabled = true; say(push.dataset.unsupported); }
    if (button && supported) {
      const key = (b64) => {
        const s = atob(b64.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - b64.length % 4) % 4));
        return Uint8Array.from(s, (ch) => ch.charCodeAt(0));
      };
      // pushManager.subscribe needs an active worker; the worker's scope is
      // its own folder, so navigator.serviceWorker.ready would never come.
      const activated = (reg) => new Promise((resolve) => {
        const w = reg.installing || reg.waiting;
        if (!w) { resolve(reg); return; }
        w.addEventListener("statechange", () => { if (w.state === "activated") resolve(reg); });
      });
      button.addEventListener("click", async () => {
        button.disabled = true; msg.hidden = true;
        try {
          if (await Notification.requestPermission() !== "granted") { say(push.dataset.denied); return; }
          const reg = await activated(await navigator.serviceWorker.register(push.dataset.worker));
          // A browser that cannot reach its push service may never answer.
          const sub = await Promise.race([
            reg.pushManager.subscribe({userVisibleOnly: true, applicationServerKey: key(push.dataset.key)}),
            new Promise((_, no) => setTimeout(() => no(new Error(push.dataset.timeout)), 20000))]);
          const r = await post(push.dataset.action, JSON.stringify(sub.toJSON()), {"Content-Type": "application/json"});
          if (r.status === 201) { window.location.reload(); return; }
          const body = await r.json().catch(() => ({}));
          say(push.dataset.failed + " " + (body.error || r.statusText));
        } catch (err) {
          say(push.dataset.failed + " " + err.message);
        } finally {
          button.disabled = false;
        }
      });
    }
  }
})();
