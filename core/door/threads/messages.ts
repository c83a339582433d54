import type { MessagePort } from 'node:worker_threads';
import type { ThreadTraffic } from './module.ts';
import type { ListenerBounds } from '../../http/listener-bounds.ts';

/* Messages between the main thread and a serving thread (one FIFO queue each way). */

/** The file door as a thread starts it: its init, the snapshot to start from, and its own channel to main's side. */
export interface DoorStart {
  init: unknown;
  snapshot: unknown;
  port: MessagePort;
}

/** The HTTPS port a thread shares with main's HTTPS listener (reusePort), and the certificate now. */
export interface WorkerTls {
  host: string;
  port: number;
  /** PEM (a Buffer arrives as a Uint8Array). */
  cert: Uint8Array;
  key: Uint8Array;
}

/** `workerData` of a serving thread. */
export interface WorkerInit {
  host: string;
  port: number;
  /** The main thread's internal loopback listener. */
  forwardPort: number;
  /** The per-boot key of the peer header. */
  key: Uint8Array;
  /** The current app's door, once it listens (until then the thread forwards everything). */
  door?: DoorStart;
  /** HTTPS to serve too (TLS on, main's HTTPS listener open with reusePort). */
  tls?: WorkerTls;
  /** `http.*` bounds of the thread's listeners (the current app's). */
  bounds: ListenerBounds;
  /** The service's per-address connection counts (shared memory, listener-bounds.ts). */
  slots: Int32Array;
}

export type ToWorker =
  /** Serve with this door (a new app listens), or with none (its app closed: forward everything). */
  | ({ t: 'door' } & DoorStart)
  | { t: 'drop' }
  | { t: 'stats'; id: number }
  /** Listen on this HTTPS port (or move there), take a new certificate, or stop HTTPS (undefined). */
  | { t: 'tls'; tls: WorkerTls | undefined }
  /** New `http.*` bounds (a reload changed them). */
  | { t: 'bounds'; bounds: ListenerBounds }
  | { t: 'close' };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'error'; message: string }
  | { t: 'stats'; id: number; served: number; forwarded: number }
  /** Bytes per client address over the thread's sockets since the last report (about once a second). */
  | { t: 'traffic'; peers: ThreadTraffic[] };
