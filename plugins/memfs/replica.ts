import type { BasicCredentials, ServingThreads, ThreadChannel, ThreadServeMode } from '../../sdk/index.ts';
import type { MemFileNode, MemNode } from './entry.ts';
import type { CommitReply } from './thread-upload.ts';

/** A file as the serving threads hold it: the shared bytes and the headers main built. */
export interface ThreadFile {
  data: SharedArrayBuffer;
  head: string[];
  zip: boolean;
}

/** Which memfs reads a thread answers (`sdk/fs-thread-serve.ts`). */
export type ThreadMode = ThreadServeMode;

/** What main sends the threads, stamped with one increasing sequence (the order of the writes). */
export type ReplicaOp =
  | { seq: number; op: 'put'; path: string; file: ThreadFile }
  | { seq: number; op: 'del'; path: string }
  | { seq: number; op: 'mode'; mode: ThreadMode }
  /** Main's verdict on a thread's upload (no sequence: it follows the write's own op on the channel). */
  | CommitReply;

/** A new thread's starting point: every file and the sequence it is current with. */
export interface ReplicaSnapshot {
  seq: number;
  mode: ThreadMode;
  files: Array<[string, ThreadFile]>;
}

/** What the memfs thread module gets as `init`. */
export interface ReplicaInit {
  corsOrigins: string[];
  /** One BigInt64: the sequence of the last change main sent (stored after the send). */
  published: SharedArrayBuffer;
  /**
   * Set when threads take uploads: each receives up to `maxBytes` at once (thread-upload.ts). With
   * memfs auth on, `basic` is the configured credential: a thread takes only uploads that carry
   * exactly it, anything else goes to main (its 401 or 400).
   */
  uploads?: { maxBytes: number; basic?: BasicCredentials };
  /** One Int32: bytes of the uploads the threads are receiving (`MemfsReplica.threadBytes`). */
  threadBytes: SharedArrayBuffer;
}

/**
 * The memfs side of the serving threads: file bodies live in SharedArrayBuffers (one per file,
 * never copied again), and every change of the index is broadcast to the threads in the order
 * main made it. Main stays the only owner of the index (quotas, 507, purge, cleanup); a thread
 * only reads. Exists only with `http.threads` > 0: without threads memfs keeps plain Buffers.
 */
export class MemfsReplica {
  #seq = 0;
  #channel: ThreadChannel | undefined;
  #mode: ThreadMode = 'all';
  /**
   * What main has sent, readable by every thread at no cost: a thread that is behind drains its
   * channel before it answers, so a write main committed before a request arrived is never
   * answered with older bytes (a viewer that got playlist n from one thread gets n or later from
   * every other, and every segment n lists).
   */
  readonly #published = new BigInt64Array(new SharedArrayBuffer(8));
  /**
   * Bytes of the uploads the threads are receiving, all threads together (they add and subtract
   * with Atomics). memfs counts them in flight beside its own (limit, in-flight bound); main
   * subtracts an upload's bytes when it takes its commit (`received`).
   */
  readonly threadBytes = new Int32Array(new SharedArrayBuffer(4));

  /** Starts the thread module; `files` lists the index for the snapshot of a (re)started thread. */
  attach(threads: ServingThreads, init: Omit<ReplicaInit, 'published' | 'threadBytes'>, files: () => Iterable<[string, MemNode]>, mode: () => ThreadMode): ThreadChannel {
    this.#mode = mode();
    this.#channel = threads.register({
      name: 'memfs',
      url: new URL('./thread.ts', import.meta.url).href,
      init: { ...init, published: this.#published.buffer as SharedArrayBuffer, threadBytes: this.threadBytes.buffer as SharedArrayBuffer } satisfies ReplicaInit,
      snapshot: (): ReplicaSnapshot => {
        const out: Array<[string, ThreadFile]> = [];
        for (const [path, n] of files()) if (n.kind === 'file') out.push([path, threadFile(n)]);
        return { seq: this.#seq, mode: this.#mode = mode(), files: out };
      },
    });
    return this.#channel;
  }

  /** A Buffer over a SharedArrayBuffer of its own (uploads are received straight into it). */
  readonly alloc = (size: number): Buffer => Buffer.from(new SharedArrayBuffer(size));

  /** The bytes in shared memory (a copy only when they are not there yet). */
  share(data: Buffer): Buffer {
    if (data.buffer instanceof SharedArrayBuffer && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength) return data;
    const out = this.alloc(data.length);
    out.set(data);
    return out;
  }

  put(path: string, node: MemFileNode): void {
    this.#send({ seq: ++this.#seq, op: 'put', path, file: threadFile(node) });
  }

  del(path: string): void {
    this.#send({ seq: ++this.#seq, op: 'del', path });
  }

  #send(op: Exclude<ReplicaOp, CommitReply>): void {
    this.#channel?.broadcast(op);
    // after the send: a thread that reads this number finds the change in its channel
    Atomics.store(this.#published, 0, BigInt(op.seq));
  }

  /** A thread's upload of `bytes` reached main: they are no longer the threads' (the commit counts them). */
  received(bytes: number): void {
    Atomics.sub(this.threadBytes, 0, bytes);
  }

  /** Main's verdict on a thread's upload, after the write's own broadcast (same channel, in order). */
  reply(r: CommitReply): void {
    this.#channel?.broadcast(r);
  }

  /** Which reads the threads answer (the file hooks' taps decide, see ThreadMode). */
  mode(value: ThreadMode): void {
    if (value === this.#mode) return;
    this.#mode = value;
    this.#send({ seq: ++this.#seq, op: 'mode', mode: value });
  }
}

function threadFile(n: MemFileNode): ThreadFile {
  return { data: n.file.data!.buffer as SharedArrayBuffer, head: n.head, zip: n.zip };
}
