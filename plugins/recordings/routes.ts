import { Readable } from 'node:stream';
import { ApiError, Type, type ChildrenService, type HttpScope } from '../../sdk/index.ts';
import type { Recordings } from './service.ts';
import { toMp4 } from './mp4.ts';
import {
  CutQuery, DeleteQuery, NameParams, RecordingCreate, RecordingSettings, RecordingView, SpansQuery,
} from './schema.ts';

const TAGS = ['recordings'];
const BASE = '/api/v3/recordings';
/** Seconds a cut lasts when the request names no duration. */
export const DEFAULT_CUT_SECONDS = 30;

/** Unix ms of an RFC 3339 time or a unix time (seconds; milliseconds when it has 12 digits or more). */
export function parseTime(v: string, what: string): number {
  const s = v.trim();
  if (/^\d+(\.\d+)?$/.test(s)) {
    const n = Number(s);
    return s.split('.')[0]!.length >= 12 ? Math.round(n) : Math.round(n * 1000);
  }
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(s) ? Date.parse(s) : NaN;
  if (Number.isNaN(ms)) throw new ApiError(400, 'Bad Request', [`${what}: not an RFC 3339 or unix time`], 'RECORDING_BAD_TIME');
  return ms;
}

export interface CutOptions { children: ChildrenService; ffmpeg: string; maxSeconds: number }

/** `/api/v3/recordings`: create, list, read (with spans), delete, and the cut. */
/** Cuts (`/get`) served at once; more get 429 until one ends. */
export const MAX_CUTS = 4;

/** The status of each reason a recorded playlist is refused. */
const PLAYLIST_STATUS = { RECORDING_NOT_FOUND: 404, RECORDING_NO_MEDIA: 404, RECORDING_NOT_PUBLIC: 409, RECORDING_PLAYLIST_TOO_LONG: 400 } as const;

export function recordingRoutes(http: HttpScope, recs: Recordings, cut: CutOptions): void {
  let cutsRunning = 0;
  http.get(BASE, { schema: { summary: 'Every recording', tags: TAGS, response: { 200: Type.Array(RecordingView) } } },
    async () => recs.list());

  http.post(BASE, { schema: { summary: 'Record a stream of the stream table', tags: TAGS, body: RecordingCreate, response: { 201: RecordingView } } },
    async (req, reply) => {
      const { name, ...settings } = req.body;
      await recs.put(name, settings, true);
      return reply.code(201).send(recs.view(name));
    });

  http.put(`${BASE}/:name`, { schema: { summary: 'Create or replace a recording', tags: TAGS, params: NameParams, body: RecordingSettings } },
    async (req, reply) => {
      const created = await recs.put(req.params.name, req.body);
      return reply.code(created ? 201 : 200).send(recs.view(req.params.name));
    });

  http.get(`${BASE}/:name`, {
    schema: { summary: 'A recording and its continuous spans in [start, end]', tags: TAGS, params: NameParams, querystring: SpansQuery, response: { 200: RecordingView } },
  }, async (req) => {
    const q = req.query;
    const start = q.start === undefined ? -Infinity : parseTime(q.start, 'start');
    const end = q.end === undefined ? Infinity : parseTime(q.end, 'end');
    return recs.view(req.params.name, { start, end });
  });

  http.delete(`${BASE}/:name`, {
    schema: { summary: 'Stop and delete a recording (its segments too unless keep_files)', tags: TAGS, params: NameParams, querystring: DeleteQuery },
  }, async (req, reply) => {
    await recs.delete(req.params.name, req.query.keep_files === 'true');
    return reply.code(204).send();
  });

  http.get(`${BASE}/:name/playlist.m3u8`, {
    schema: { summary: 'An HLS VOD playlist of the recorded segments in [start, end] (their public URLs)', tags: TAGS, params: NameParams, querystring: SpansQuery },
  }, async (req, reply) => {
    const q = req.query;
    const from = q.start === undefined ? undefined : parseTime(q.start, 'start');
    const to = q.end === undefined ? undefined : parseTime(q.end, 'end');
    const p = recs.playlist(req.params.name, { kind: 'vod', from, to });
    if (!p.ok) throw new ApiError(PLAYLIST_STATUS[p.code], p.code === 'RECORDING_NOT_FOUND' ? 'Unknown recording' : 'Not Found', [p.reason], p.code);
    return reply.type('application/vnd.apple.mpegurl').header('cache-control', 'no-cache').send(p.text);
  });

  http.get(`${BASE}/:name/get`, {
    schema: { summary: 'One file (mp4 or ts) of [start, start + duration], from the keyframe at or before start', tags: TAGS, params: NameParams, querystring: CutQuery },
  }, async (req, reply) => {
    const q = req.query;
    const seconds = q.duration === undefined ? DEFAULT_CUT_SECONDS : Number(q.duration);
    if (!(seconds > 0)) throw new ApiError(400, 'Bad Request', ['duration: more than 0 seconds'], 'RECORDING_BAD_DURATION');
    if (seconds > cut.maxSeconds) throw new ApiError(400, 'Bad Request', [`duration: at most ${cut.maxSeconds} seconds`], 'RECORDING_TOO_LONG');
    const start = parseTime(q.start, 'start');
    // each cut reads up to max_get_seconds of segments, an mp4 one runs an ffmpeg: a few at once
    if (cutsRunning >= MAX_CUTS) throw new ApiError(429, 'Too Many Requests', [`at most ${MAX_CUTS} cuts at once`], 'RECORDING_CUTS_BUSY');
    cutsRunning++;
    reply.raw.once('close', () => { cutsRunning--; });
    const c = await recs.cut(req.params.name, start, Math.round(seconds * 1000));
    const format = q.format ?? 'mp4';
    const file = `${req.params.name}-${c.start}.${format}`;
    reply.header('x-recording-start', new Date(c.start).toISOString()).header('content-disposition', `inline; filename="${file}"`);
    if (format === 'ts') return reply.type('video/mp2t').send(Readable.from(c.body));
    const job = toMp4(cut.children, cut.ffmpeg, c.body, c.aac, (cut.maxSeconds + 60) * 1000);
    reply.raw.once('close', () => { job.kill(); void c.body.return(undefined); });
    return reply.type('video/mp4').send(job.out);
  });
}
