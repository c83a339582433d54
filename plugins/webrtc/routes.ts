import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, clientAddress, isApiError, PUBLIC, streamName, streamNameProblem, Type, type HttpScope } from '../../sdk/index.ts';
import type { LaddersService } from '../ladders/api.ts';
import { playerPage } from './page.ts';
import { renditionFor } from './rendition.ts';
import type { Caller, WebrtcService } from './service.ts';

/** Largest SDP body taken (a browser's offer is 3-8 KiB). */
const MAX_SDP = 64 * 1024;
const HIDDEN = { hide: true };

const SessionView = Type.Object({
  id: Type.String(), kind: Type.Union([Type.Literal('whep'), Type.Literal('whip')]), stream: Type.String(), remote: Type.String(),
  since: Type.Integer(), connected: Type.Boolean(), rx_bytes: Type.Integer(), tx_bytes: Type.Integer(),
});

/** WHEP/WHIP endpoints are called from players on other origins: every answer allows them (RFC 9725 §4.1). */
function cors(reply: FastifyReply): FastifyReply {
  return reply.header('Access-Control-Allow-Origin', '*')
    .header('Access-Control-Allow-Methods', 'GET, POST, PATCH, DELETE, OPTIONS')
    .header('Access-Control-Allow-Headers', 'Authorization, Content-Type, If-Match')
    .header('Access-Control-Expose-Headers', 'Location, ETag, Link');
}

const equal = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The token a caller gave: `Authorization: Bearer <token>`, else `?token=`. */
function tokenOf(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (typeof h === 'string' && /^Bearer\s+/i.test(h)) return h.replace(/^Bearer\s+/i, '').trim();
  const q = (req.query as Record<string, unknown> | undefined)?.token;
  return typeof q === 'string' ? q : undefined;
}

/** Where a refused WHEP or WHIP offer is logged. */
export interface RefusalLogger { warn(fields: object, msg: string): void }

/**
 * One line per refused play (WHEP) or publish (WHIP), as the RTMP and SRT plugins log theirs:
 * protocol, stream, client address, reason and the answer's status (issue 44.3). The token is
 * never logged.
 */
function logRefusal(log: RefusalLogger, mode: 'play' | 'publish', stream: string, remote: string, err: unknown): void {
  const api = isApiError(err) ? err : undefined;
  const reason = api ? (api.details[0] ?? api.message) : String((err as Error)?.message ?? err);
  const status = api?.status ?? 500;
  log.warn({ protocol: 'webrtc', stream, remote, reason, status }, `webrtc ${mode} refused: ${reason}`);
}

function caller(req: FastifyRequest, token: string | undefined): Caller {
  const ip = clientAddress(req);
  const remote = `${ip.includes(':') ? `[${ip}]` : ip}:${req.socket.remotePort ?? 0}`;
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries((req.query as Record<string, unknown> | undefined) ?? {})) if (k !== 'token' && typeof v === 'string') params[k] = v;
  return { remote, ...(token !== undefined ? { token } : {}), params };
}

/**
 * The WebRTC routes: `POST /webrtc/<stream>/whep` (play) and `/whip` (publish) take an SDP offer
 * and answer `201` with the SDP answer and the session's `Location`; `DELETE` of that location
 * ends it; `PATCH` (trickle ICE) is not offered (405: the answer carries every candidate);
 * `GET /webrtc/<stream>` is the player page; `GET /api/v3/webrtc` lists the sessions.
 */
export function webrtcRoutes(http: HttpScope, svc: WebrtcService, token: string, log: RefusalLogger, ladders: LaddersService | undefined): void {
  http.addContentTypeParser(['application/sdp', 'application/trickle-ice-sdpfrag'], { parseAs: 'string', bodyLimit: MAX_SDP }, (_req, body, done) => done(null, body));
  /**
   * `webrtc.token`, or a user's key `<user>:<token>` the stream table's rule allows (an access
   * plugin's `decideKey`, asked before the offer is read) to play or publish `about.stream`, or
   * that made the session it ends (`session`). Answers the caller (`key` set for a user's key).
   */
  const check = (req: FastifyRequest, about?: { stream: string; mode: 'play' | 'publish' }, session?: string): Caller => {
    const given = tokenOf(req);
    if (token === '' || (given !== undefined && equal(given, token))) return caller(req, given);
    if (given !== undefined && given.includes(':')) {
      const c = { ...caller(req, given), key: given };
      if (session !== undefined && svc.madeWith(session, given)) return c;
      const r = about ? svc.keyRefusal(about.stream, about.mode, c) : { kind: 'unauthorized' as const, reason: 'invalid token' };
      if (!r) return c;
      if (r.kind !== 'unauthorized') throw new ApiError(403, 'Forbidden', [r.reason], 'WEBRTC_FORBIDDEN');
    }
    throw new ApiError(401, 'Unauthorized', [given === undefined ? 'a token is required' : 'wrong token'], 'WEBRTC_TOKEN', { 'WWW-Authenticate': 'Bearer' });
  };

  http.options('/webrtc/*', { config: PUBLIC, schema: HIDDEN }, async (_req, reply) => cors(reply).code(204).send());

  // an offer sent without a Content-Type is read as SDP text here and refused 415 below, after the
  // token (fastify would refuse it with its JSON-media error before the route)
  const untyped = new WeakSet<FastifyRequest>();
  const typeless = async (req: FastifyRequest) => {
    if (req.headers['content-type'] !== undefined) return;
    untyped.add(req);
    req.headers['content-type'] = 'application/sdp';
  };
  http.post('/webrtc/*', { config: PUBLIC, schema: HIDDEN, onRequest: typeless }, async (req, reply) => {
    cors(reply);
    const m = /^(.+)\/(whep|whip)\/?$/.exec((req.params as Record<string, string>)['*'] ?? '');
    if (!m) throw new ApiError(404, 'Not Found', ['POST to /webrtc/<stream>/whep or /webrtc/<stream>/whip'], 'NOT_FOUND');
    let stream = streamName(m[1]!);
    const mode = m[2] === 'whep' ? 'play' : 'publish';
    const badName = streamNameProblem(stream);
    if (badName) throw new ApiError(400, 'Bad Request', [`invalid stream name: ${badName}`], 'STREAM_BAD_NAME');
    let out;
    try {
      const c = check(req, { stream, mode });
      if (untyped.has(req) || !/^application\/sdp\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
        throw new ApiError(415, 'Unsupported Media Type', ['the offer must be sent as application/sdp'], 'WEBRTC_OFFER');
      }
      if (typeof req.body !== 'string' || !req.body.startsWith('v=0')) {
        throw new ApiError(400, 'Bad Request', ['the body must be an SDP offer (Content-Type: application/sdp)'], 'WEBRTC_OFFER');
      }
      if (mode === 'play') stream = renditionFor(stream, (req.query as Record<string, unknown> | undefined)?.rendition, ladders);
      out = mode === 'play' ? await svc.play(stream, req.body, c) : await svc.publish(stream, req.body, c);
    } catch (err) {
      logRefusal(log, mode, stream, caller(req, undefined).remote, err);
      throw err;
    }
    return reply.code(201).header('Content-Type', 'application/sdp').header('Location', `/webrtc/session/${out.id}`).send(out.sdp);
  });

  http.delete('/webrtc/session/:id', { config: PUBLIC, schema: HIDDEN }, async (req, reply) => {
    cors(reply);
    check(req, undefined, (req.params as { id: string }).id);
    if (!svc.end((req.params as { id: string }).id)) throw new ApiError(404, 'Not Found', ['no such WebRTC session'], 'WEBRTC_SESSION_NOT_FOUND');
    return reply.code(200).send();
  });

  http.patch('/webrtc/session/:id', { config: PUBLIC, schema: HIDDEN }, async (_req, reply) => {
    cors(reply).header('Allow', 'DELETE, OPTIONS');
    throw new ApiError(405, 'Method Not Allowed', ['trickle ICE is not offered: the answer carries every candidate'], 'WEBRTC_NO_TRICKLE', { Allow: 'DELETE, OPTIONS' });
  });

  http.get('/webrtc/*', { config: PUBLIC, schema: HIDDEN }, async (req, reply) => {
    // the token first, so that a caller without it learns nothing of which streams exist
    const stream = streamName((req.params as Record<string, string>)['*'] ?? '');
    check(req, { stream, mode: 'play' });
    // the page is public only where the stream is: live or on demand
    if (stream === '' || !svc.readable(stream)) throw new ApiError(404, 'Not Found', ['no such stream'], 'STREAM_NOT_FOUND');
    return reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(playerPage());
  });

  http.get('/api/v3/webrtc', {
    schema: { summary: 'List of the WebRTC sessions (WHEP viewers and WHIP publishers)', tags: ['webrtc'], response: { 200: Type.Array(SessionView) } },
  }, async () => svc.list());
}
