import { isMainThread } from 'node:worker_threads';
import type { FileDoorTapContext, FileDoorTapFactory, FileDoorTaps } from '../../sdk/file-door.ts';
import type { FsServeRefusal, FsServeRequest, FsServedEvent } from '../../sdk/fs-hooks.ts';
import { IgnoreList } from './ignore-list.ts';
import { validSessionId } from './session-id.ts';
import { sessionRefusals } from './errors.ts';
import { IGNORED, SEGMENT, mountPath, sessionParam, sessionPlaylists, viewerInfo, type Note } from './hls-request.ts';
import { DoorAdmission } from './door-admission.ts';
import { Outbox } from './door-outbox.ts';
import type { DoorInit, MainMessage } from './door-wire.ts';

/*
 * The HLS half of the sessions plugin as a file door tap module (issue 28): one copy next to
 * every copy of the door, main's and each serving thread's. A copy decides alone, from the
 * shared admission state (door-wire.ts) and the session ids main told it: it answers a playlist
 * without `session` with a session-tagged master, admits or refuses a new viewer, tags the
 * playlists of known ones, and counts the bytes it sent per session. It tells main what it saw
 * in batches (door-outbox.ts); main registers the viewers and counts the bytes (door-main.ts).
 * Imports SDK files one by one: this module is loaded in every thread.
 */

/** Options of one copy (the default export takes them from where it runs). */
export interface CopyOptions {
  /** Send every report at once (main's copy: `send` is synchronous there). */
  immediate: boolean;
  /** A thread's batch interval, ms (default 500). */
  flushMs?: number;
}

function readInit(init: unknown): DoorInit {
  const i = init as Partial<DoorInit> | undefined;
  if (!i || !(i.state instanceof SharedArrayBuffer) || typeof i.maxSessions !== 'number' || !Array.isArray(i.ignore)) {
    throw new TypeError('sessions door tap: init must be { state: SharedArrayBuffer, maxSessions: number, ignore: string[] }');
  }
  return i as DoorInit;
}

/** The taps of one copy. */
export function hlsDoorTaps(ctx: FileDoorTapContext, opts: CopyOptions): FileDoorTaps {
  const init = readInit(ctx.init);
  const ignore = new IgnoreList(init.ignore);
  const admission = new DoorAdmission(init.state, init.maxSessions);
  const outbox = new Outbox((m) => ctx.send(m), opts.immediate, opts.flushMs ?? 500);
  // the sessions main holds, as far as this copy heard, and the ones it registered itself
  const known = new Set<string>();
  let full: ReadonlySet<string> = new Set();
  ctx.onMessage((raw) => {
    const m = raw as MainMessage;
    if (m.t === 'known') {
      for (const id of m.add) known.add(id);
      for (const id of m.drop) known.delete(id);
    } else if (m.t === 'full') {
      full = new Set(m.locations);
    }
  });
  ctx.send({ t: 'hello' });

  const preServe = (req: FsServeRequest): FsServeRefusal | undefined => {
    if (!req.path.endsWith('.m3u8')) return undefined;
    if (!ignore.collectable(req.remote)) {
      req.note = IGNORED;
      return undefined;
    }
    const id = sessionParam(req.query);
    // a viewer another copy registered a moment ago (main's `known` may still be on its way)
    if (id !== undefined && (known.has(id) || (validSessionId(id) && admission.recent(id)))) {
      req.note = { kind: 'session', id } satisfies Note;
      return undefined;
    }
    if (id !== undefined && !validSessionId(id)) return sessionRefusals.badId();
    const location = mountPath(req);
    const second = Math.floor(Date.now() / 1000);
    const why = admission.full(full.has(location)) ?? (id === undefined ? undefined : admission.reserve(second));
    if (why !== undefined) {
      if (admission.refused()) outbox.limit(why);
      return sessionRefusals.limit(why);
    }
    admission.admitted();
    if (id === undefined) {
      req.note = { kind: 'new' } satisfies Note;
      return undefined;
    }
    known.add(id);
    admission.remember(id);
    outbox.register({ id, ...viewerInfo(req) }, admission.counted ? second : undefined);
    req.note = { kind: 'session', id } satisfies Note;
    return undefined;
  };

  const transformPlaylist = sessionPlaylists();

  const onServed = (ev: FsServedEvent): void => {
    const req = ev.request;
    const note = req.note as Note | undefined;
    if (note) {
      if (note.kind === 'session') outbox.egress(note.id, ev.bytes, 0);
      return;
    }
    if (!SEGMENT.test(req.path)) return;
    const id = sessionParam(req.query);
    // an id this copy has not heard of may be one another copy registered a moment ago: main
    // knows (or drops the bytes); anything that cannot be an id is not sent
    if (id === undefined || (!known.has(id) && !validSessionId(id)) || !ignore.collectable(req.remote)) return;
    outbox.egress(id, ev.bytes, 1);
  };

  return { preServe, transformPlaylist, onServed, close: () => outbox.close() };
}

/** The module's default export: main's copy reports at once, a thread's every 500 ms. */
const factory: FileDoorTapFactory = (ctx) => hlsDoorTaps(ctx, { immediate: isMainThread });
export default factory;
