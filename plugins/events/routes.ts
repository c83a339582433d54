import type { OutgoingHttpHeaders } from 'node:http';
import { ApiError, Type, type CoreEvent, type HttpScope } from '../../sdk/index.ts';
import type { EventBus } from './bus.ts';
import { checkFilterBounds, compileFilter, splitGlobs } from './filter.ts';
import type { SseHub } from './sse.ts';
import type { Webhooks } from './webhooks.ts';
import { IAM_SUBJECT, type IamAccess } from '../iam/api.ts';

const EventsQuery = Type.Object({
  types: Type.Optional(Type.String({ description: 'Comma-separated globs over event types, e.g. `process.*,ingest.*`.' })),
  subjects: Type.Optional(Type.String({ description: 'Comma-separated globs over subject values: `process:cam-*`, or a bare glob for any value.' })),
  last_event_id: Type.Optional(Type.String({ description: 'Resume after this id (for clients that cannot send `Last-Event-ID`; the header wins).' })),
});

const WebhookStateSchema = Type.Object({
  url: Type.String(), types: Type.Array(Type.String()), subjects: Type.Array(Type.String()),
  queued: Type.Integer(), delivered: Type.Integer(), failed: Type.Integer(), dropped: Type.Integer(),
  last_status: Type.Integer(), last_error: Type.String(),
});

const StatusSchema = Type.Object({
  boot: Type.String(),
  history: Type.Object({ capacity: Type.Integer(), size: Type.Integer(), oldest_id: Type.Integer(), newest_id: Type.Integer() }),
  streams: Type.Object({ open: Type.Integer(), dropped: Type.Integer(), peak_queued_bytes: Type.Integer(), limit_bytes: Type.Integer() }),
});

const TypeSchema = Type.Object({
  type: Type.String(), description: Type.String(), emitter: Type.String(),
  subject: Type.Array(Type.String()), payload: Type.Record(Type.String(), Type.String()),
});

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  // never buffered or transformed on the way (proxies, compression)
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  connection: 'keep-alive',
};

/** `GET /api/v3/events` (SSE) and its side routes: webhook delivery state, status, the type catalogue. */
export function eventRoutes(http: HttpScope, bus: EventBus, hub: SseHub, webhooks: Webhooks, iam?: IamAccess): void {
  http.get('/api/v3/events', {
    schema: { summary: 'Server-Sent Events: the event stream, resumable with Last-Event-ID', tags: ['events'], querystring: EventsQuery },
  }, async (req, reply) => {
    const header = req.headers['last-event-id'];
    const fromId = (Array.isArray(header) ? header[0] : header) ?? req.query.last_event_id;
    const filter = { types: splitGlobs(req.query.types), subjects: splitGlobs(req.query.subjects) };
    // a bad filter throws here, before the hijack: the client gets the Error body (400)
    const headers = { ...reply.getHeaders(), ...SSE_HEADERS } as OutgoingHttpHeaders;
    checkFilterBounds(filter);
    compileFilter(filter);
    // a request that reached this app while it closes (a reload) would wait forever: the client retries
    if (hub.closed) throw new ApiError(503, 'Service Unavailable', ['the event stream is restarting (config reload): retry'], 'EVENTS_RESTARTING');
    // a HEAD gets the stream's headers, not a stream that never ends
    if (req.method === 'HEAD') return reply.headers(SSE_HEADERS).send();
    // written by hand: the encoding hooks (gzip, ?pretty) would buffer the endless body
    reply.hijack();
    // an IAM user's token sees only events of the processes and streams its policies allow
    const who = req.auth?.user;
    // and only while its token stands: a new password, a login turned off or a deleted user ends what it sees
    const login = req.auth?.login ?? 0;
    const sees = iam && who?.startsWith(IAM_SUBJECT) ? (e: CoreEvent) => iam.tokenRefusal(who, login) === undefined && iam.seesEvent(who, e) : undefined;
    hub.open(reply.raw, headers, bus, filter, fromId, sees);
    return reply;
  });

  http.get('/api/v3/events/webhooks', {
    schema: { summary: 'Delivery state of each webhook target', tags: ['events'], response: { 200: Type.Array(WebhookStateSchema) } },
  }, async () => webhooks.states());

  http.get('/api/v3/events/status', {
    schema: { summary: 'The event history and the open streams', tags: ['events'], response: { 200: StatusSchema } },
  }, async () => {
    const r = bus.ring;
    return {
      boot: bus.boot,
      history: { capacity: r.capacity, size: r.size, oldest_id: r.oldest, newest_id: r.newest },
      streams: hub.stats,
    };
  });

  http.get('/api/v3/events/types', {
    schema: { summary: 'The declared event types', tags: ['events'], response: { 200: Type.Array(TypeSchema) } },
  }, async () => bus.types().map((t) => ({ ...t, subject: [...t.subject] })));
}
