import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import {
  ApiError, MimeTable, CorsPolicy, fsServeHooksRef, markStreamedBody, normalizeIp, openFsNode,
  type BasicAuthService, type FilesystemService, type RunCredentials, type FsNode, type FsOpenHint, type FsServeHooks, type FsWriteResult,
} from '../../sdk/index.ts';
import { resolveClientAddress } from '../http/client-address.ts';
import type { CidrSet } from '../../sdk/client-address.ts';
import { takeThreadPeer } from './threads/peer-header.ts';
import { THREAD_PEER_HEADER, isServingThreadSocket } from './threads/module.ts';
import { FileDoor } from './door.ts';
import { answerRead } from './read.ts';
import { PlaylistRewrites } from './serve-hooks.ts';
import { answerWrite } from './write.ts';
import { runWriteVerdict } from './run-writes.ts';
import type { PendingUploads } from './pending.ts';
import type { DoorAsk, DoorEnv, DoorMount, DoorStore, Maybe } from './types.ts';

/*
 * The door on the main thread: its mounts come from the filesystem registry (every provider with
 * a `publicMount`), reads open the filesystems themselves, uploads are stored by them, and the
 * client's address is the front door's (trusted proxies, the serving threads' signed peer).
 */

export interface MainDoorOptions {
  filesystems(): readonly FilesystemService[];
  hooks: FsServeHooks;
  corsOrigins: readonly string[];
  mime: MimeTable;
  /** The auth plugin's Basic check, when one provides it. */
  basicAuth(): BasicAuthService | undefined;
  /** The run credentials of the children (a child writes with its run's token, only what its command names). */
  runs?(): RunCredentials | undefined;
  trusted: CidrSet;
  /** The serving threads' per-boot key (their forwarded requests carry the client's peer). */
  threadKey?: Buffer;
  routeHeads(): ReadonlySet<string>;
  /** True while some plugin may proxy a miss to another node (the cluster's `forward` tap). */
  missToRouter(): boolean;
  /** Logged once when writes need credentials but nobody checks them. */
  warn(message: string): void;
  /** Paths with an upload in progress, here or on a serving thread. */
  pending: PendingUploads;
  /** The client a `httpHooksRef.peer` tap vouches for (a cluster node passing a request on), if any. */
  vouched?(req: IncomingMessage): string | undefined;
}

/**
 * The main thread's mount of one filesystem. A miss for a path being uploaded (here or on a
 * serving thread) waits for that upload, at most `PENDING_WAIT_MS`, and looks again: ffmpeg does
 * not wait for its PUTs' answers, so a playlist stored here may list a segment a thread is still
 * handing over.
 */
export function mainMount(fs: FilesystemService, mime: MimeTable, pending: PendingUploads): DoorMount | undefined {
  const pm = fs.publicMount;
  if (!pm) return undefined;
  const open = (path: string, head: boolean, ask?: DoorAsk) =>
    openFsNode(fs, path, ask ? { head, door: true, query: ask.query, remote: ask.remote } : head ? HEAD_HINT : GET_HINT);
  const again = (path: string, head: boolean, x: FsNode | undefined): Maybe<FsNode | undefined> => {
    const key = `${fs.name}:${path}`;
    return x !== undefined || !pending.has(key) ? x : pending.settled(key).then(() => open(path, head));
  };
  return {
    name: fs.name, prefix: fs.mount === '/' ? '' : fs.mount, defaultType: pm.defaultType, mime: fs.mime ?? mime,
    defaultFile: fs.defaultFile, writes: pm.writes, reserved: new Set(pm.reserved ?? []), preflight: pm.preflight ?? true,
    asks: pm.asks === true,
    open: (path, head, ask) => {
      const n = open(path, head, ask);
      // the hot path: a file in memory, found at once (no key, no closure)
      if (n === undefined) return again(path, head, n);
      return n instanceof Promise ? n.then((x) => again(path, head, x)) : n;
    },
  };
}

// one hint per kind of read, not one per request (filesystems only read it)
const GET_HINT: FsOpenHint = Object.freeze({ head: false, door: true });
const HEAD_HINT: FsOpenHint = Object.freeze({ head: true, door: true });

/** Stores uploads through the filesystems and calls `onWritten` (not for the API's uploads: `hooks` undefined). */
function mainStore(byName: (name: string) => FilesystemService | undefined, hooks: FsServeHooks | undefined, pending: PendingUploads): DoorStore {
  const fsOf = (m: DoorMount) => {
    const fs = byName(m.name);
    if (!fs) throw new ApiError(503, 'Service Unavailable', [`filesystem ${m.name} is gone`], 'FS_GONE');
    return fs;
  };
  return {
    async write(m, path, req, remote): Promise<FsWriteResult> {
      const fs = fsOf(m);
      markStreamedBody(req);
      // a refusal halfway leaves the request intact: the rest is drained so the answer arrives
      const chunks = (req as Readable).iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>;
      const cl = req.headers['content-length'];
      let r: FsWriteResult;
      const key = `${m.name}:${path}`;
      pending.begin(key);
      try {
        if (fs.writeStream) r = await fs.writeStream(path, chunks, { length: cl === undefined ? undefined : Number(cl) });
        else {
          const parts: Uint8Array[] = [];
          for await (const c of chunks) parts.push(c);
          r = await fs.writeFile(path, Buffer.concat(parts));
        }
      } finally {
        pending.end(key);
      }
      if (hooks?.onWritten.isUsed()) {
        const bytes = (await fs.stat(path))?.size_bytes ?? 0;
        hooks.onWritten.call({ mount: m.prefix === '' ? '/' : m.prefix, path, remote, headers: req.headers, bytes });
      }
      return r;
    },
    delete: async (m, path) => fsOf(m).deleteFile(path),
  };
}

/** The main thread's door for one app. */
export function mainDoor(o: MainDoorOptions): FileDoor {
  let warned = false;
  const byName = (name: string) => o.filesystems().find((f) => f.name === name);
  const env: DoorEnv = {
    where: 'main',
    cors: new CorsPolicy(o.corsOrigins),
    hooks: o.hooks,
    rewrites: new PlaylistRewrites(),
    clientOf: (req) => clientOf(req, o.trusted, o.threadKey, o.vouched),
    routeHeads: o.routeHeads,
    store: mainStore(byName, o.hooks, o.pending),
    authorize: async (m, remote, authorization, path, method) => {
      // a child's run credential: no backoff (a guess of 24 random bytes gets nowhere), its own paths only
      const run = runWriteVerdict(o.runs?.(), authorization, m.prefix + path);
      if (run === 'ok') return;
      if (run) throw run;
      const creds = m.writes!.basic!;
      const basic = o.basicAuth();
      if (basic?.check) return basic.check({ address: remote, authorization, method, path: m.prefix + path }, creds);
      if (!warned) {
        warned = true;
        o.warn(`public writes to ${m.prefix || '/'} need Basic credentials but no plugin checks them (load the auth plugin): they are refused`);
      }
      throw new ApiError(401, 'Unauthorized', [`basic auth for ${m.prefix || '/'} needs the auth plugin`], 'FS_AUTH_UNAVAILABLE',
        { 'WWW-Authenticate': 'basic realm=Restricted' });
    },
    missToRouter: o.missToRouter,
    onError: (err, path) => o.warn(`reading ${path.slice(0, 256)} failed: ${(err as Error).message}`),
  };
  const door = new FileDoor(env);
  let seen: readonly FilesystemService[] = [];
  let count = -1;
  const refresh = () => {
    const list = o.filesystems();
    if (list === seen && list.length === count) return;
    seen = list;
    count = list.length;
    door.setMounts(list.flatMap((fs) => mainMount(fs, o.mime, o.pending) ?? []));
  };
  const handle = door.handle.bind(door);
  door.handle = (req, res) => {
    refresh();
    return handle(req, res);
  };
  return door;
}

const PEER = Symbol.for('core.files.peer');

/**
 * The client as the front door will see it: the address a `peer` tap vouches for (a cluster
 * node), a serving thread's signed peer (only on its connections), then the trusted proxies'
 * headers. The signed headers stay for the front door.
 */
function clientOf(req: IncomingMessage, trusted: CidrSet, key: Buffer | undefined, vouched?: (req: IncomingMessage) => string | undefined): string {
  const memo = (req as unknown as Record<symbol, string | undefined>)[PEER];
  if (memo !== undefined) return memo;
  const v = vouched?.(req);
  if (v !== undefined) {
    (req as unknown as Record<symbol, string>)[PEER] = normalizeIp(v);
    return normalizeIp(v);
  }
  let peer: string | undefined;
  const signed = req.headers[THREAD_PEER_HEADER];
  if (signed !== undefined && key && isServingThreadSocket(req.socket)) {
    peer = takeThreadPeer({ [THREAD_PEER_HEADER]: signed }, key, req.method ?? '', req.url ?? '')?.address;
  }
  if (peer === undefined) {
    const direct = untrustedPeer(req.socket as SocketWithPeer, trusted);
    if (direct !== undefined) return direct;
  }
  const address = resolveClientAddress(req, trusted, peer ?? normalizeIp(req.socket.remoteAddress ?? ''));
  (req as unknown as Record<symbol, string>)[PEER] = address;
  return address;
}

const SOCKET_PEER = Symbol('core.files.socket-peer');
type SocketWithPeer = IncomingMessage['socket'] & { [SOCKET_PEER]?: { trusted: CidrSet; address: string | undefined } };

/**
 * The TCP peer of a connection when it is no trusted proxy (then it is the client whatever the
 * headers say), known once per connection and set of trusted proxies; undefined for a trusted peer.
 */
function untrustedPeer(socket: SocketWithPeer, trusted: CidrSet): string | undefined {
  const known = socket[SOCKET_PEER];
  if (known !== undefined && known.trusted === trusted) return known.address;
  const peer = normalizeIp(socket.remoteAddress ?? '');
  // a socket without an address yet (closed) is not remembered
  if (peer === '') return undefined;
  const address = trusted.has(peer) ? undefined : peer;
  socket[SOCKET_PEER] = { trusted, address };
  return address;
}

/** What `/api/v3/fs/{name}/...` answers with: the door's read answer and upload taker, without the public mount's hooks. */
export interface ApiFiles {
  read(fs: FilesystemService, prefix: string, path: string, req: IncomingMessage, res: ServerResponse): void;
  write(fs: FilesystemService, prefix: string, path: string, req: IncomingMessage, res: ServerResponse): void;
}

/**
 * The door for the API's file routes (protected: the route checked access already): no CORS, no
 * file hooks, links answered under the API prefix, uploads stored without `onWritten`.
 */
export function apiFiles(filesystems: () => readonly FilesystemService[], mime: MimeTable, pending: PendingUploads): ApiFiles {
  const byName = (name: string) => filesystems().find((f) => f.name === name);
  const env: DoorEnv = {
    where: 'main', cors: new CorsPolicy([]), hooks: fsServeHooksRef.create(), rewrites: new PlaylistRewrites(), clientOf: () => '',
    routeHeads: () => new Set(), store: mainStore(byName, undefined, pending), authorize: async () => {},
  };
  const mount = (fs: FilesystemService, prefix: string): DoorMount => ({
    name: fs.name, prefix, defaultType: 'application/data', mime: fs.mime ?? mime, defaultFile: fs.defaultFile, writes: {},
    reserved: new Set(), preflight: false, open: (path, head) => openFsNode(fs, path, { head }),
  });
  return {
    read: (fs, prefix, path, req, res) => { void answerRead(env, mount(fs, prefix), req, res, path, ''); },
    write: (fs, prefix, path, req, res) => { void answerWrite(env, mount(fs, prefix), req, res, path, ''); },
  };
}
