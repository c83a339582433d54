import type { IncomingMessage, ServerResponse } from 'node:http';
// the SDK's files one by one, not its index: this module runs in every serving thread (memory per thread)
import { normalizeIp } from '../../sdk/client-address.ts';
import { CorsPolicy } from '../../sdk/fs-cors.ts';
import { fsServeHooksRef, type FsServeHooks } from '../../sdk/fs-hooks.ts';
import { PlaylistRewrites } from './serve-hooks.ts';
import { receiveMessageOnPort } from 'node:worker_threads';
import { MimeTable } from '../../sdk/fs-mime.ts';
import type { FsFile, FsNode, FsReader, FsReaderFactory } from '../../sdk/fs.ts';
import type { FileDoorTapFactory } from '../../sdk/file-door.ts';
import type { FsView, FsViewFactory } from '../../sdk/fs-view.ts';
import type { ThreadFastPath } from './threads/module.ts';
import type { DoorStart } from './threads/messages.ts';
import { SharedRelease } from './threads/shared-release.ts';
import { FileDoor } from './door.ts';
import { ThreadUploads } from './thread-uploads.ts';
import { tapInto } from './taps.ts';
import { tapContext } from './tap-state.ts';
import type { DoorEnv, DoorMount } from './types.ts';
import { waitsForContinue } from './write.ts';
import type { DoorInit, DoorSnapshot, FromDoor, ToDoor, WireFile, WireMount, WireTap } from './wire.ts';

/** The door of a serving thread: its request handler, and its close (the app closed, the thread ends). */
export interface ThreadDoor {
  handle: ThreadFastPath;
  close(): void;
}

const fileOf = (w: WireFile): FsFile => ({
  data: Buffer.from(w.data), size: w.size, mtimeMs: w.mtimeMs, etag: w.etag, mime: w.mime, lastModified: w.lastModified, headers: w.headers,
});

/**
 * The file door in a serving thread: the same door as main's, with each mount's files from a copy
 * of its store (changes main broadcasts in order; those main published before a request are
 * applied before it is answered) or the store's view module over that copy, from the store's own
 * reader (a folder), or from main; uploads
 * received here and stored by main; the door tap modules loaded here too. What the door leaves
 * goes to main.
 */
export function threadDoor(start: DoorStart): ThreadDoor {
  const init = start.init as DoorInit;
  const snap = start.snapshot as DoorSnapshot | undefined;
  const port = start.port;
  const send = (m: FromDoor) => port.postMessage(m);
  const copies = new Map<string, Map<string, FsFile>>();
  const readers = new Map<string, Promise<FsReader>>();
  const published = new BigInt64Array(init.published);
  let seq = snap?.seq ?? 0;
  let mainReads = snap?.mainReads ?? true;
  let heads: ReadonlySet<string> = new Set(snap?.heads ?? []);
  for (const m of init.mounts) if (m.source.kind === 'copy') copies.set(m.name, new Map());
  for (const [mount, path, f] of snap?.files ?? []) copies.get(mount)?.set(path, fileOf(f));
  const hooks = fsServeHooksRef.create();
  const tapReceivers = new Map<string, (m: unknown) => void>();
  const closers: Array<() => void> = [];
  const release = new SharedRelease();
  const uploads = new ThreadUploads(send, new Int32Array(init.uploadBytes), init.uploadMax, release);
  const mime = MimeTable.load(init.mimetypesFile);

  const env: DoorEnv = {
    where: 'thread',
    cors: new CorsPolicy(init.corsOrigins),
    hooks,
    rewrites: new PlaylistRewrites(),
    // a client behind a proxy header is main's to resolve (trusted proxies)
    clientOf: (req) => (req.headers['x-forwarded-for'] !== undefined || req.headers['x-real-ip'] !== undefined
      ? undefined : normalizeIp(req.socket.remoteAddress ?? '')),
    routeHeads: () => heads,
    store: uploads,
    authorize: async () => {},
    takesWrite: (m, req, res, path) => uploads.take(m, req, res, path),
    mainReads: () => mainReads,
  };
  const views = new Map<string, ViewSlot>();
  for (const w of init.mounts) if (w.view && w.source.kind === 'copy') views.set(w.name, { view: undefined, changed: [] });
  const door = new FileDoor(env, init.mounts.map((w) => mountOf(w, mime, copies, readers, views.get(w.name), () => mainReads)));
  // until every tap and view module is loaded here, main answers (no read may pass without its taps)
  let loading = init.taps.length + views.size;
  const loaded = (what: string, p: Promise<() => void>) => p.then((close) => {
    closers.push(close);
    loading--;
  }, (err: unknown) => send({ t: 'error', message: `${what}: ${(err as Error).message}` }));
  for (const t of init.taps) void loaded(`door tap module ${t.name}`, loadTap(t, hooks, send, tapReceivers));
  for (const [mount, slot] of views) {
    const w = init.mounts.find((x) => x.name === mount)!;
    void loaded(`view module of ${mount}`, loadView(w, copies.get(mount)!, slot, send));
  }
  const apply = (m: ToDoor) => {
    switch (m.t) {
      case 'reply': uploads.reply(m); return;
      case 'tap': tapReceivers.get(m.name)?.(m.message); return;
      case 'state': mainReads = m.mainReads; heads = new Set(m.heads); return;
      default:
        // the snapshot already holds everything up to its sequence
        if (m.seq <= seq) return;
        seq = m.seq;
        applyChange(copies.get(m.mount), m, release);
        for (const fn of views.get(m.mount)?.changed ?? []) fn(m.path);
    }
  };
  port.on('message', apply);
  const handle: ThreadFastPath = (req: IncomingMessage, res: ServerResponse) => {
    if (loading > 0) return false;
    // main sent changes this thread has not handled yet: take them now, before answering
    if (Number(Atomics.load(published, 0)) > seq) for (let r = receiveMessageOnPort(port); r; r = receiveMessageOnPort(port)) apply(r.message as ToDoor);
    if (/100-continue/i.test(String(req.headers.expect ?? ''))) waitsForContinue(req);
    return door.handle(req, res);
  };
  const close = () => {
    release.close();
    for (const slot of views.values()) slot.changed.length = 0;
    for (const c of closers) c();
    port.close();
  };
  return { handle, close };
}

/** Loads a door tap module and puts its taps on the thread's hooks; resolves with its close (the last report sent). */
async function loadTap(t: WireTap, hooks: FsServeHooks, send: (m: FromDoor) => void, receivers: Map<string, (m: unknown) => void>): Promise<() => void> {
  const mod = await import(t.url) as { default: FileDoorTapFactory };
  const copy = tapContext(t.init, t.state, {
    send: (message) => send({ t: 'tap', name: t.name, message }),
    onMessage: (fn) => { receivers.set(t.name, fn); },
    report: (report) => send({ t: 'report', name: t.name, report }),
  }, false);
  const taps = mod.default(copy.ctx);
  tapInto(hooks, t.name, taps);
  return () => {
    taps.close?.();
    copy.close();
  };
}

/** A mount's view in this thread: loaded once its module is, with its change listeners. */
interface ViewSlot {
  view: FsView | undefined;
  changed: Array<(path: string) => void>;
}

/** Loads a mount's view module over the thread's copy of its store; resolves with its close. */
async function loadView(w: WireMount, files: Map<string, FsFile>, slot: ViewSlot, send: (m: FromDoor) => void): Promise<() => void> {
  const mod = await import(w.view!.url) as { default: FsViewFactory };
  const view = mod.default(w.view!.init, {
    get: (path) => files.get(path),
    onChange: (fn) => { slot.changed.push(fn); },
    send: (message) => send({ t: 'view', mount: w.name, message }),
  });
  slot.view = view;
  return () => view.close?.();
}

/** A put or delete from main on a mount's copy; the body it replaces or removes is counted as dropped. */
function applyChange(files: Map<string, FsFile> | undefined, m: Extract<ToDoor, { t: 'put' | 'del' }>, release: SharedRelease): void {
  const old = files?.get(m.path);
  if (m.t === 'put') files?.set(m.path, fileOf(m.file));
  else files?.delete(m.path);
  // the old body's shared bytes are freed once this thread collected its handle too
  if (old) release.dropped(old.size);
}

/** A mount of the thread's door: files from its view, its copy, its reader, or main (a miss here). */
function mountOf(w: WireMount, mime: MimeTable, copies: Map<string, Map<string, FsFile>>, readers: Map<string, Promise<FsReader>>,
  slot: ViewSlot | undefined, mainReads: () => boolean): DoorMount {
  let open: DoorMount['open'] = () => undefined;
  const src = w.source;
  if (slot) {
    // main's in-process read taps would take the request after the view held it: main's from the start
    open = (path, _head, ask) => (mainReads() ? undefined : slot.view?.open(path, { query: ask?.query ?? '', remote: ask?.remote }));
  } else if (src.kind === 'copy') {
    const files = copies.get(w.name)!;
    open = (path) => {
      const file = files.get(path);
      return file && { kind: 'file', path, file };
    };
  } else if (src.kind === 'reader') {
    const reader = import(src.module.url).then((mod: { default: FsReaderFactory }) => mod.default(src.module.init));
    readers.set(w.name, reader);
    open = (path): Promise<FsNode | undefined> => reader.then((r) => r.open(path)).catch(() => undefined);
  }
  return {
    name: w.name, prefix: w.prefix, defaultType: w.defaultType, mime, defaultFile: w.defaultFile, writes: w.writes,
    reserved: new Set(w.reserved), preflight: w.preflight, uploadMax: w.uploadMax, open, asks: slot !== undefined,
  };
}
