import {
  ApiError, isApiError, type BasicAuthService, type FilesystemService, type FsFile, type FsServeHooks,
} from '../../sdk/index.ts';
import type { PendingUploads } from './pending.ts';
import type { AppThreads } from './threads/pool.ts';
import { mainReads } from './taps.ts';
import type { WireReport } from './tap-state.ts';
import type { DoorInit, DoorSnapshot, FromDoor, ToDoor, WireCommit, WireFile, WireMount, WireTap } from './wire.ts';

/** Bytes of uploads all serving threads receive at once; larger ones stream to main. */
export const THREAD_UPLOAD_MAX = 64 * 1024 * 1024;

export interface DoorThreadsOptions {
  threads: AppThreads;
  filesystems: readonly FilesystemService[];
  hooks: FsServeHooks;
  corsOrigins: readonly string[];
  mimetypesFile: string;
  taps: readonly WireTap[];
  heads(): readonly string[];
  basicAuth(): BasicAuthService | undefined;
  pending: PendingUploads;
  /** What a thread's copy of a tap module sent its plugin. */
  fromTap(name: string, message: unknown): void;
  /** A report of a thread's copy of a tap module. */
  reportOf(name: string, report: WireReport): void;
  warn(message: string): void;
}

const wireFile = (f: FsFile): WireFile => ({
  data: f.data!.buffer as SharedArrayBuffer, size: f.size, mtimeMs: f.mtimeMs, etag: f.etag, mime: f.mime, lastModified: f.lastModified,
  headers: f.headers,
});

/** A body in a SharedArrayBuffer of its own (the copies share it); copied once when it is not. */
function shared(f: FsFile): FsFile {
  const d = f.data;
  if (d && d.buffer instanceof SharedArrayBuffer && d.byteOffset === 0 && d.byteLength === d.buffer.byteLength) return f;
  const data = Buffer.from(new SharedArrayBuffer(d?.length ?? 0));
  if (d) data.set(d);
  return { ...f, data };
}

/**
 * Main's side of the door in the serving threads (`thread-door.ts`): each thread's copy of every
 * copied store fed from the stores' change feeds in one sequence, the uploads the threads receive
 * stored here, and the tap modules' messages and reports. Started when the app listens (every
 * filesystem and tap is known then); gives the broadcast to every thread's copy.
 */
export function startDoorThreads(o: DoorThreadsOptions): { broadcast(m: ToDoor): void; refresh(): void; close(): void } {
  let seq = 0;
  const published = new BigInt64Array(new SharedArrayBuffer(8));
  const uploadBytes = new Int32Array(new SharedArrayBuffer(4));
  const mounts: WireMount[] = [];
  const byName = new Map<string, FilesystemService>();
  for (const fs of o.filesystems) {
    const pm = fs.publicMount;
    if (!pm) continue;
    byName.set(fs.name, fs);
    // a view by request is main's (a thread has neither its query rules nor its state) unless the
    // store gives the threads a view module; the files a store feeds are copied all the same, and
    // a thread passes what its copy (or its view) does not answer to main
    const source = fs.changes ? 'copy' : pm.asks ? undefined : fs.reader ? 'reader' : undefined;
    if (source === 'copy') fs.changes!.useSharedMemory?.(true);
    mounts.push({
      name: fs.name, prefix: fs.mount === '/' ? '' : fs.mount, defaultType: pm.defaultType, defaultFile: fs.defaultFile,
      writes: pm.writes, reserved: [...(pm.reserved ?? [])], preflight: pm.preflight ?? true,
      // beyond the store's limit main refuses before the body is sent (its early 507)
      uploadMax: Math.min(THREAD_UPLOAD_MAX, fs.usage().limit > 0 ? fs.usage().limit : THREAD_UPLOAD_MAX),
      source: source === 'copy' ? { kind: 'copy' } : source === 'reader' ? { kind: 'reader', module: fs.reader! } : { kind: 'main' },
      ...(source === 'copy' && pm.view ? { view: pm.view } : {}),
    });
  }
  let broadcast: ((m: unknown) => void) | undefined;
  const send = (m: ToDoor) => broadcast?.(m);
  const unsubscribe: Array<() => void> = [];
  for (const m of mounts) {
    const fs = byName.get(m.name)!;
    if (m.source.kind !== 'copy') continue;
    unsubscribe.push(fs.changes!.subscribe((c) => {
      const n = ++seq;
      send(c.file ? { t: 'put', seq: n, mount: m.name, path: c.path, file: wireFile(shared(c.file)) } : { t: 'del', seq: n, mount: m.name, path: c.path });
      // after the send: a thread that reads this number finds the change in its channel
      Atomics.store(published, 0, BigInt(n));
    }));
  }
  const init: DoorInit = {
    mounts, corsOrigins: [...o.corsOrigins], mimetypesFile: o.mimetypesFile, taps: [...o.taps],
    published: published.buffer as SharedArrayBuffer, uploadBytes: uploadBytes.buffer as SharedArrayBuffer, uploadMax: THREAD_UPLOAD_MAX,
  };
  broadcast = o.threads.runDoor({
    init,
    snapshot: (): DoorSnapshot => {
      const files: DoorSnapshot['files'] = [];
      for (const m of mounts) {
        if (m.source.kind !== 'copy') continue;
        for (const [path, f] of byName.get(m.name)!.changes!.snapshot().files) files.push([m.name, path, wireFile(shared(f))]);
      }
      return { seq, mainReads: mainReads(o.hooks), heads: [...o.heads()], files };
    },
    receive: (raw) => {
      const m = raw as FromDoor;
      if (m.t === 'tap') o.fromTap(m.name, m.message);
      else if (m.t === 'view') byName.get(m.mount)?.fromView?.(m.message);
      else if (m.t === 'report') o.reportOf(m.name, m.report);
      else if (m.t === 'error') o.warn(m.message);
      else if (m.t === 'begin') o.pending.begin(`${m.mount}:${m.path}`);
      else if (m.t === 'abandon') o.pending.end(`${m.mount}:${m.path}`);
      else if (m.t === 'commit') {
        Atomics.sub(uploadBytes, 0, m.data.byteLength);
        void commit(o, byName.get(m.mount), mounts.find((x) => x.name === m.mount), m).then((r) => {
          o.pending.end(`${m.mount}:${m.path}`);
          send(r);
        });
      }
    },
  });
  let told = mainReads(o.hooks);
  send({ t: 'state', mainReads: told, heads: [...o.heads()] });
  // a plugin that taps reads later (iam, once anonymous reads are restricted): the threads leave reads to main from then on
  const refresh = () => {
    if (mainReads(o.hooks) === told) return;
    told = !told;
    send({ t: 'state', mainReads: told, heads: [...o.heads()] });
  };
  return { broadcast: send, refresh, close: () => { for (const u of unsubscribe) u(); } };
}

/**
 * Stores an upload a thread received, as main's door stores its own: the Basic check with its
 * backoff (a thread took only the right credential, but the answer must wait as main's would),
 * the write with its length, `onWritten`; errors become the status and Error body for the thread.
 */
async function commit(o: DoorThreadsOptions, fs: FilesystemService | undefined, m: WireMount | undefined, c: WireCommit): Promise<ToDoor> {
  try {
    if (!fs || !m) throw new ApiError(503, 'Service Unavailable', [`filesystem ${c.mount} is gone`], 'FS_GONE');
    const basic = m.writes?.basic;
    if (basic) {
      const auth = o.basicAuth();
      if (!auth?.check) throw new ApiError(401, 'Unauthorized', ['no plugin checks Basic credentials'], 'FS_AUTH_UNAVAILABLE', { 'WWW-Authenticate': 'basic realm=Restricted' });
      await auth.check({ address: c.remote, authorization: c.headers.authorization as string | undefined }, basic);
    }
    const data = Buffer.from(c.data);
    const r = fs.writeStream ? await fs.writeStream(c.path, [data], { length: data.length }) : await fs.writeFile(c.path, data);
    if (o.hooks.onWritten.isUsed()) {
      const bytes = (await fs.stat(c.path))?.size_bytes ?? 0;
      o.hooks.onWritten.call({ mount: m.prefix === '' ? '/' : m.prefix, path: c.path, remote: c.remote, headers: c.headers, bytes });
    }
    return { t: 'reply', id: c.id, status: r.created ? 201 : 204 };
  } catch (err) {
    const e = isApiError(err) ? err : new ApiError(400, 'Bad Request', [(err as Error).message], 'FS_WRITE');
    return { t: 'reply', id: c.id, status: e.status, error: e.toBody(), errorHeaders: e.headers };
  }
}
