import { Type, type Static } from '@sinclair/typebox';
import { Str, Int, List } from './sections-a.ts';
import { describe } from './describe.ts';

/* The `events` section (plugin `events`): beyond the reference, which has no event stream. */

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

export const EventsConfig = describe(Type.Object({
  history: Int(1000),
  // timers: node runs one longer than 2^31-1 ms at once, every millisecond
  heartbeat_ms: Type.Integer({ default: 15000, maximum: 2_147_483_647 }),
  client_buffer_kbytes: Int(256),
  overflow_grace_ms: Type.Integer({ default: 5000, maximum: 2_147_483_647 }),
  webhooks: Type.Array(EventsWebhook, { default: [] }),
  webhook_queue: Int(1000),
  webhook_retry_seconds: Int(300),
  webhook_timeout_seconds: Type.Integer({ default: 10, maximum: 2_147_483 }),
}, { default: {} }), {
  history: 'Events kept in memory for `Last-Event-ID` resumes (plugin `events`).',
  heartbeat_ms: 'Milliseconds between SSE heartbeat comments.',
  client_buffer_kbytes: 'KiB an SSE client may have unread before it is dropped with `events.overflow`.',
  overflow_grace_ms: 'Milliseconds a dropped client gets to read its last bytes before its socket is closed.',
  webhooks: 'Webhook targets (env: JSON objects separated by `|`).',
  webhook_queue: 'Events queued per webhook target; the oldest is dropped (and counted) beyond.',
  webhook_retry_seconds: 'Seconds an event is retried (exponential backoff) before it counts as failed.',
  webhook_timeout_seconds: 'Seconds a webhook request may take.',
});
export type EventsConfig = Static<typeof EventsConfig>;
