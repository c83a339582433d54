import type { MessagePort } from 'node:worker_threads';
import type { ThreadTraffic } from '../../../sdk/serving-threads.ts';

/* Messages between the main thread and a serving thread (one FIFO queue each way). */

/** A module as a thread gets it: its name, URL, init data and the snapshot to start from. */
export interface ModuleSpec {
  name: string;
  url: string;
  init: unknown;
  snapshot: unknown;
}

/** A module with the thread's end of its own channel (broadcasts; a thread may drain it synchronously). */
export interface ModuleStart extends ModuleSpec {
  port: MessagePort;
}

/** `workerData` of a serving thread. */
export interface WorkerInit {
  host: string;
  port: number;
  /** The main thread's internal loopback listener. */
  forwardPort: number;
  /** The per-boot key of the peer header. */
  key: Uint8Array;
  modules: ModuleStart[];
}

export type ToWorker =
  | ({ t: 'module' } & ModuleStart)
  | { t: 'drop'; name: string }
  | { t: 'stats'; id: number }
  | { t: 'close' };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'error'; message: string }
  | { t: 'stats'; id: number; served: number; forwarded: number }
  /** Bytes per client address over the thread's sockets since the last report (about once a second). */
  | { t: 'traffic'; peers: ThreadTraffic[] };
