import type { IncomingHttpHeaders } from 'node:http';
import type { BasicCredentials } from '../../sdk/credentials.ts';
import type { ErrorBody } from '../../sdk/errors.ts';
import type { FsReaderModule } from '../../sdk/fs.ts';
import type { WireReport } from './tap-state.ts';

/*
 * What main's door and the serving threads' copies say to each other over the door's channel.
 */

/** A file of a copied store as a thread holds it: its facts and the shared bytes. */
export interface WireFile {
  data: SharedArrayBuffer;
  size: number;
  mtimeMs: number;
  etag: string;
  mime?: string;
  lastModified?: string;
  /** Its own response headers (`FsFile.headers`: a `cache-control`), as a flat list. */
  headers?: readonly string[];
}

/** A mount as a thread serves it, and where its files come from. */
export interface WireMount {
  name: string;
  prefix: string;
  defaultType: string;
  defaultFile?: string;
  writes?: { basic?: BasicCredentials };
  reserved: string[];
  preflight: boolean;
  /** The largest upload a thread receives for this mount (the store's limit when smaller than the threads' budget). */
  uploadMax: number;
  /** `copy`: the thread keeps a copy from the change feed; `reader`: it opens the store itself; `main`: main answers. */
  source: { kind: 'copy' } | { kind: 'reader'; module: FsReaderModule } | { kind: 'main' };
  /** A copied store's view module (`FsPublicMount.view`): asked first for every read of the mount. */
  view?: { url: string; init?: unknown };
}

/** A door tap module as a thread loads it, with the state its copies share (tap-state.ts). */
export interface WireTap {
  name: string;
  url: string;
  init?: unknown;
  state: SharedArrayBuffer;
}

/** The door's `init` in every thread. */
export interface DoorInit {
  mounts: WireMount[];
  corsOrigins: string[];
  mimetypesFile: string;
  taps: WireTap[];
  /** One BigInt64: the sequence of the last change main broadcast (stored after the send). */
  published: SharedArrayBuffer;
  /** One Int32: bytes of the uploads all threads are receiving together. */
  uploadBytes: SharedArrayBuffer;
  /** The most all threads receive at once; larger uploads go to main. */
  uploadMax: number;
}

/** A new thread's starting point. */
export interface DoorSnapshot {
  seq: number;
  /** Main has in-process read taps a thread cannot run: every read goes to main. */
  mainReads: boolean;
  heads: string[];
  files: Array<[mount: string, path: string, file: WireFile]>;
}

/** Main to threads, in order. */
export type ToDoor =
  | { t: 'put'; seq: number; mount: string; path: string; file: WireFile }
  | { t: 'del'; seq: number; mount: string; path: string }
  | { t: 'state'; mainReads: boolean; heads: string[] }
  | { t: 'tap'; name: string; message: unknown }
  | { t: 'reply'; id: string; status: number; error?: ErrorBody; errorHeaders?: Record<string, string> };

/** A thread's upload received whole, for main to store. */
export interface WireCommit {
  t: 'commit';
  id: string;
  mount: string;
  path: string;
  remote: string;
  headers: IncomingHttpHeaders;
  data: SharedArrayBuffer;
}

/** Threads to main. */
export type FromDoor =
  | WireCommit
  | { t: 'begin' | 'abandon'; mount: string; path: string }
  | { t: 'tap'; name: string; message: unknown }
  /** A mount's view sent its store a message (`FilesystemService.fromView`). */
  | { t: 'view'; mount: string; message: unknown }
  /** A tap module copy's report (tap-state.ts). */
  | { t: 'report'; name: string; report: WireReport }
  /** Something a thread's copy could not do (a tap or view module that failed to load). */
  | { t: 'error'; message: string };
