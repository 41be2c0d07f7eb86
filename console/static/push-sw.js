// Parley console's service worker: it only shows the push notifications
// Parley sends when a job ends (service/notify's pushMessage) and opens
// the job's page on a click.
"use strict";
self.addEventListener("push", (e) => {
  let m = {};
  try { m = e.data ? e.data.json() : {}; } catch (_) { m = {body: e.data.text()}; }
  e.waitUntil(self.registration.showNotification(m.title || "Parley", {body: m.body || "", data: {url: m.url || "/console/"}, tag: m.job_id ? "job-" + m.job_id : undefined}));
});
self.addEventListener("notificationclick", (e) => {
  e.notification.close();
  e.waitUntil(self.clients.openWindow(e.notification.data.url));
});
