// An openapi-fetch client calling every operation of api/openapi.json, with
// the types openapi-typescript generates from it (schema.gen.d.ts, written by
// scripts/check-clients.sh). It is type-checked with tsc --strict, never run:
// every success body's data must be there without a non-null assertion, and
// uploads must take a Blob as it is.
import createClient from "openapi-fetch";
import type { components, paths, webhooks } from "./schema.gen";

type Schemas = components["schemas"];

const api = createClient<paths>({
  baseUrl: "http://127.0.0.1:8080",
  headers: { Authorization: "Bearer pk_live_example" },
});

// multipart/form-data: the body object becomes a FormData, files as they are.
function formData(body: Record<string, unknown>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) {
    if (value instanceof Blob) form.append(name, value);
    else if (value !== undefined) form.append(name, String(value));
  }
  return form;
}

async function system(): Promise<string> {
  const health = await api.GET("/api/v1/health", { params: { query: { deep: "false" } } });
  if (health.error) return health.error.error.code;
  const doc = await api.GET("/api/v1/openapi.json");
  return `${health.data.data.status} ${health.data.data.version} ${Object.keys(doc.data ?? {}).length}`;
}

async function keys(): Promise<number> {
  const created = await api.POST("/api/v1/keys", {
    body: { name: "ci", scopes: ["transcribe:read", "transcribe:write"], expires_at: "2027-01-01T00:00:00Z" },
  });
  if (!created.data) return 0;
  const key: Schemas["ApiKeyCreated"] = created.data.data;
  const list = await api.GET("/api/v1/keys");
  const revoked = await api.DELETE("/api/v1/keys/{id}", { params: { path: { id: key.id } } });
  return (list.data?.data.length ?? 0) + (revoked.data ? revoked.data.data.id : 0) + key.secret.length;
}

async function account(): Promise<number> {
  const profile = await api.GET("/api/v1/profile");
  if (!profile.data) return 0;
  const amount: number = profile.data.data.balance.amount_usd;
  const running = await api.GET("/api/v1/jobs/running");
  if (!running.data) return amount;
  let recipients = 0;
  for (const job of running.data.data.jobs) {
    if (job.kind === "sms-batch") recipients += job.total_recipients;
    else recipients += job.file_name.length;
  }
  return amount + recipients + running.data.data.in_flight;
}

async function transcription(file: Blob): Promise<string> {
  const upload = await api.POST("/api/v1/transcribe", {
    body: { file, language: "en", email_after: "false" },
    bodySerializer: formData,
    headers: { "Idempotency-Key": "upload-1" },
  });
  const fromURL = await api.POST("/api/v1/transcribe", {
    body: { url: "https://example.com/talk.mp3" },
  });
  if (!upload.data || !fromURL.data) return "";
  const id = String(upload.data.data.id);
  const job = await api.GET("/api/v1/transcribe/{id}", { params: { path: { id } } });
  const list = await api.GET("/api/v1/transcribe", {
    params: { query: { file_name: "talk", status: "done,failed", from: "2026-11-01", limit: 20 } },
  });
  const found = await api.GET("/api/v1/transcripts/search", { params: { query: { q: '"quarterly review"', limit: 5 } } });
  const hit = found.data?.data.jobs[0]?.passages[0];
  const srt = await api.GET("/api/v1/transcribe/{id}/export", {
    params: { path: { id }, query: { format: "srt" } },
    parseAs: "text",
  });
  const current = await api.GET("/api/v1/transcribe/{id}/transcript", { params: { path: { id } } });
  const edited = await api.PUT("/api/v1/transcribe/{id}/transcript", {
    params: { path: { id } },
    body: { text: "The quick brown fox.", base_version: current.data?.data.version ?? 1 },
  });
  const deleted = await api.DELETE("/api/v1/transcribe/{id}", {
    params: { path: { id: String(fromURL.data.data.id) } },
  });
  const words = job.data?.data.words?.length ?? 0;
  const version = `${edited.data?.data.version} ${edited.data?.data.changed} ${edited.error?.error.details?.currentVersion}`;
  return `${job.data?.data.status} ${words} ${list.data?.data.jobs.length} ${hit?.at_sec} ${srt.data} ${version} ${deleted.data?.data.deleted}`;
}

async function subtitles(file: File): Promise<string> {
  const created = await api.POST("/api/v1/subtitles", {
    body: { file, style: JSON.stringify({ position: "top", fontSize: 36 }), use_voice_cleanup: "true" },
    bodySerializer: formData,
  });
  if (!created.data) return "";
  const id = String(created.data.data.id);
  const job = await api.GET("/api/v1/subtitles/{id}", { params: { path: { id } } });
  const list = await api.GET("/api/v1/subtitles");
  const srt = await api.GET("/api/v1/subtitles/{id}/srt", { params: { path: { id } }, parseAs: "text" });
  const saved = await api.PUT("/api/v1/subtitles/{id}/srt", {
    params: { path: { id } },
    body: "1\n00:00:00,000 --> 00:00:01,000\nHello\n",
    bodySerializer: (body) => body,
    headers: { "Content-Type": "application/x-subrip" },
  });
  const transcript = await api.GET("/api/v1/subtitles/{id}/transcript", { params: { path: { id } } });
  const corrected = await api.PUT("/api/v1/subtitles/{id}/transcript", {
    params: { path: { id } },
    body: { text: "Hello there" },
  });
  const reburned = await api.POST("/api/v1/subtitles/{id}/reburn", { params: { path: { id } } });
  const video = job.data?.data.output_video_url;
  let bytes = 0;
  if (video) {
    const token = new URL(video).pathname.split("/").pop() ?? "";
    const media = await api.GET("/api/v1/media/{token}", {
      params: { path: { token } },
      parseAs: "blob",
    });
    bytes = media.data?.size ?? 0;
    const head = await api.HEAD("/api/v1/media/{token}", { params: { path: { token } } });
    bytes += Number(head.response.headers.get("Content-Length") ?? 0);
  }
  const deleted = await api.DELETE("/api/v1/subtitles/{id}", { params: { path: { id } } });
  const srtVersions = `${transcript.data?.data.srt_version} ${corrected.data?.data.srt_version}`;
  return `${list.data?.data.jobs.length} ${srt.data} ${saved.data?.data.cues} ${srtVersions} ${reburned.data?.data.reburned} ${bytes} ${deleted.data?.data.deleted}`;
}

async function conversations(): Promise<string> {
  const list = await api.GET("/api/v1/conversations");
  const first = list.data?.data.conversations[0];
  if (!first) return "";
  const one = await api.GET("/api/v1/conversations/{id}", {
    params: { path: { id: first.id } },
  });
  if (!one.data) return "";
  let values = "";
  for (const [name, item] of Object.entries(one.data.data.data_collection ?? {})) {
    const value: string | number | boolean | null = item.value;
    values += `${name}=${value} `;
  }
  return values + one.data.data.transcript.length;
}

async function webhookEndpoints(): Promise<number> {
  const created = await api.POST("/api/v1/webhooks", {
    body: { url: "https://example.com/hooks", events: ["transcription.done", "sms.message.received"] },
  });
  if (!created.data) return 0;
  const id = String(created.data.data.id);
  const list = await api.GET("/api/v1/webhooks");
  const deliveries = await api.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id } } });
  let replayed = 0;
  const first = deliveries.data?.data.deliveries[0];
  if (first) {
    const replay = await api.POST("/api/v1/webhooks/deliveries/{id}/replay", {
      params: { path: { id: String(first.id) } },
    });
    replayed = replay.data?.data.id ?? 0;
  }
  const deleted = await api.DELETE("/api/v1/webhooks/{id}", { params: { path: { id } } });
  return (list.data?.data.webhooks.length ?? 0) + replayed + (deleted.data?.data.deleted ? 1 : 0) + created.data.data.secret.length;
}

// A webhook receiver: the event body, branched on its type.
function onEvent(event: Schemas["WebhookEvent"]): string {
  switch (event.type) {
    case "transcription.done":
    case "transcription.failed":
      return `${event.data.id} ${event.data.status}`;
    case "subtitles.done":
    case "subtitles.failed":
    case "subtitles.reburned":
      return `${event.data.id} ${event.data.output_video_url}`;
    case "sms.batch.completed":
      return `${event.data.id} ${event.data.totalPriceUsd}`;
    case "sms.message.received":
      return `${event.data.threadId} ${event.data.body}`;
    case "sms.opt_out.changed":
      return `${event.data.phone} ${event.data.optedOut}`;
    case "conversation.ready":
      return `${event.data.id} ${event.data.transcript.length}`;
  }
}

type TranscriptionDone = webhooks["transcription.done"]["post"]["requestBody"]["content"]["application/json"];
function onTranscriptionDone(event: TranscriptionDone): number {
  return event.data.words?.length ?? 0;
}

async function notifications(): Promise<number> {
  const created = await api.POST("/api/v1/notifications/push-subscriptions", {
    body: { endpoint: "https://push.example.com/abc", keys: { p256dh: "key", auth: "auth" } },
  });
  if (!created.data) return 0;
  const deleted = await api.DELETE("/api/v1/notifications/push-subscriptions/{id}", {
    params: { path: { id: String(created.data.data.id) } },
  });
  return deleted.data ? 1 : 0;
}

async function sms(): Promise<string> {
  const sent = await api.POST("/api/v1/sms", {
    body: { from: "+15550001111", body: "Hello {{name}}", recipients: [{ phone: "+15550002222", variables: { name: "Ann" } }] },
  });
  if (!sent.data) return sent.error.error.code;
  let out = "";
  const result = sent.data.data;
  if ("jobId" in result) {
    const batch = await api.GET("/api/v1/sms/jobs/{id}", { params: { path: { id: result.jobId } } });
    out += `${batch.data?.data.status} ${batch.data?.data.totalPriceUsd} `;
  } else {
    out += `${result.messageId} ${result.priceUsd} `;
  }
  const threads = await api.GET("/api/v1/sms/threads", {
    params: { query: { limit: 10, archived: false, unread: true, phone: "+1 415" } },
  });
  const messages = await api.GET("/api/v1/sms/messages", { params: { query: { q: "invoice", phone: "555", limit: 20 } } });
  out += `${messages.data?.data.messages.length} `;
  const thread = threads.data?.data.threads[0];
  if (!thread) return out;
  const page = await api.GET("/api/v1/sms/threads/{id}", { params: { path: { id: thread.id }, query: { limit: 50 } } });
  const updated = await api.PATCH("/api/v1/sms/threads/{id}", {
    params: { path: { id: thread.id } },
    body: { markRead: true, remoteContactName: "Ann" },
  });
  const reply = await api.POST("/api/v1/sms/threads/{id}/reply", {
    params: { path: { id: thread.id } },
    body: { body: "Thanks" },
  });
  const optedOut = thread.optOut ? `opted out since ${thread.optOut.since} (${thread.optOut.source})` : "may be texted";
  return out + `${page.data?.data.messages.length} ${page.data?.data.messages[0]?.kind} ${updated.data?.data.unreadCount} ` +
    `${reply.data?.data.status} ${optedOut}`;
}

async function optOuts(): Promise<string> {
  const added = await api.POST("/api/v1/sms/opt-outs", { body: { phones: ["+14155550142"], source: "api" } });
  const list = await api.GET("/api/v1/sms/opt-outs", { params: { query: { limit: 50, offset: 0, phone: "+14155550142" } } });
  const removed = await api.DELETE("/api/v1/sms/opt-outs/{phone}", { params: { path: { phone: "+14155550142" } } });
  return `${added.data?.data.optOuts.length} ${list.data?.data.optOuts[0]?.since} ${removed.data?.data.optedOut}`;
}

async function scheduledSMS(): Promise<string> {
  const sent = await api.POST("/api/v1/sms", {
    body: {
      from: "+15550001111",
      body: "Doors open at 7",
      recipients: [{ phone: "+15550002222" }, { phone: "+15550003333" }],
      sendAt: "2026-12-24T18:00:00Z",
      quietHours: { start: "21:00", end: "08:00" },
    },
  });
  if (!sent.data) return sent.error.error.code;
  const result = sent.data.data;
  if ("jobId" in result) {
    const canceled = await api.POST("/api/v1/sms/jobs/{id}/cancel", { params: { path: { id: result.jobId } } });
    if (!canceled.data) return canceled.error.error.code;
    const b = canceled.data.data;
    return `${b.status} ${b.canceledCount} ${b.waitingCount} ${b.sendAt} ${b.quietHours?.start ?? "none"}`;
  }
  const canceled = await api.POST("/api/v1/sms/messages/{id}/cancel", { params: { path: { id: result.messageId } } });
  return canceled.data ? `${canceled.data.data.status} ${canceled.data.data.notBefore}` : canceled.error.error.code;
}

export async function main(): Promise<string[]> {
  const file = new File([new Uint8Array([0, 1, 2])], "talk.mp4", { type: "video/mp4" });
  return [
    await system(),
    String(await keys()),
    String(await account()),
    await transcription(new Blob([new Uint8Array([0, 1, 2])], { type: "audio/wav" })),
    await subtitles(file),
    await conversations(),
    String(await webhookEndpoints()),
    String(await notifications()),
    await sms(),
    await scheduledSMS(),
    await optOuts(),
    onEvent({ id: "evt_1", type: "sms.message.received", created_at: "2026-01-01T00:00:00Z", data: {} as Schemas["SMSMessage"] }),
    String(onTranscriptionDone({} as TranscriptionDone)),
  ];
}
