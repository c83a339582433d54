import { ConfigErrorList, type ConfigErrors, describe, nameGlob, Int, List, MAX_TIMER_SECONDS, section, type Static, Str, Type } from '../../sdk/index.ts';

/* The `events` section (this plugin's): beyond the reference, which has no event stream. */

/** One webhook target: every matching event is POSTed to `url` as JSON. Only `url` is required. */
export const EventsWebhook = describe(Type.Object({
  url: Type.String(),
  types: Type.Optional(List([])),
  subjects: Type.Optional(List([])),
  secret: Type.Optional(Str('')),
}), {
  url: 'http(s) URL the events are POSTed to.',
  types: 'Globs over event types (empty = all), e.g. `process.*`.',
  subjects: 'Globs over subject values (`process:cam-*`, or any value; empty = all).',
  secret: 'HMAC-SHA256 key of the `X-Core-Signature` header (empty = no signature).',
});
export type EventsWebhook = Static<typeof EventsWebhook>;

export const EventsConfig = section({
  history: [Int(1000), 'Events kept in memory for `Last-Event-ID` resumes (plugin `events`).'],
  // timers: node runs one longer than 2^31-1 ms at once, every millisecond
  heartbeat_ms: [Int(15000, { maximum: 2_147_483_647 }), 'Milliseconds between SSE heartbeat comments.'],
  client_buffer_kbytes: [Int(256), 'KiB an SSE client may have unread before it is dropped with `events.overflow`.'],
  overflow_grace_ms: [Int(5000, { maximum: 2_147_483_647 }), 'Milliseconds a dropped client gets to read its last bytes before its socket is closed.'],
  webhooks: [Type.Array(EventsWebhook, { default: [] }), 'Webhook targets (env: JSON objects separated by `|`).'],
  webhook_queue: [Int(1000), 'Events queued per webhook target; the oldest is dropped (and counted) beyond.'],
  webhook_retry_seconds: [Int(300, { maximum: MAX_TIMER_SECONDS }), 'Seconds an event is retried (exponential backoff) before it counts as failed.'],
  webhook_timeout_seconds: [Int(10, { maximum: MAX_TIMER_SECONDS }), 'Seconds a webhook request may take.'],
});
export type EventsConfig = Static<typeof EventsConfig>;


/** The plugin's settings: the `events` section (history, SSE bounds, webhooks). */
export const EventsPluginConfig = EventsConfig;

const KEYED = /^[A-Za-z_][A-Za-z0-9_]*:/;

/** Bounds, webhook URLs (http or https) and filter globs. */
export function validateEvents(s: EventsConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  if (s.history < 1 || s.history > 1_000_000) errs.add('history', 'must be between 1 and 1000000');
  if (s.heartbeat_ms !== 0 && s.heartbeat_ms < 100) errs.add('heartbeat_ms', 'must be 0 (off) or at least 100');
  if (s.client_buffer_kbytes < 1) errs.add('client_buffer_kbytes', 'must be at least 1');
  if (s.overflow_grace_ms < 0) errs.add('overflow_grace_ms', 'must not be negative');
  if (s.webhook_queue < 1) errs.add('webhook_queue', 'must be at least 1');
  if (s.webhook_retry_seconds < 0) errs.add('webhook_retry_seconds', 'must not be negative');
  if (s.webhook_timeout_seconds < 1) errs.add('webhook_timeout_seconds', 'must be at least 1');
  s.webhooks.forEach((w, i) => {
    let u: URL | undefined;
    try { u = new URL(w.url); } catch { /* reported below */ }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) errs.add(`webhooks.${i}.url`, `'${w.url}' is not an http(s) URL`);
    for (const g of w.types ?? []) if (!nameGlob(g)) errs.add(`webhooks.${i}.types`, `malformed glob '${g}'`);
    for (const g of w.subjects ?? []) if (!nameGlob(g.replace(KEYED, ''))) errs.add(`webhooks.${i}.subjects`, `malformed glob '${g}'`);
  });
  return errs.map;
}
