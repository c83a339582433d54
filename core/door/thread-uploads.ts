import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../../sdk/errors.ts';
import { basicCredentialsMatch, parseBasicAuthorization } from '../../sdk/basic-credentials.ts';
import type { FsWriteResult } from '../../sdk/fs.ts';
import type { DoorMount, DoorStore, Maybe } from './types.ts';
import type { FromDoor, ToDoor } from './wire.ts';
import type { SharedRelease } from './threads/shared-release.ts';
import { goOn } from './write.ts';

type Reply = Extract<ToDoor, { t: 'reply' }>;

const VERDICT_MS = 30_000;
const BODY = Symbol.for('core.files.thread-body');
type Held = IncomingMessage & { [BODY]?: SharedArrayBuffer };

/**
 * Uploads in a serving thread: a PUT/POST that carries exactly the mount's Basic credential (or
 * none is needed) and whose body fits the threads' shared budget (`max` bytes for all uploads every
 * thread receives at once) is received into one SharedArrayBuffer; main then stores it (quotas,
 * 507, `onWritten` and the Basic check with its backoff stay main's) and its verdict is the answer.
 * A chunked body (ffmpeg's HLS PUTs) is received while it fits; one that outgrows the budget is put
 * back in front of the request and goes to main whole. Anything else goes to main unread.
 */
export class ThreadUploads implements DoorStore {
  readonly #pending = new Map<string, { resolve(r: FsWriteResult): void; reject(e: unknown): void; timer: NodeJS.Timeout; bytes: number }>();
  readonly #prefix = randomBytes(6).toString('hex');
  #next = 0;
  readonly #pool: Int32Array;
  readonly #max: number;
  readonly #send: (m: FromDoor) => void;
  readonly #dropped: SharedRelease | undefined;

  /** `release` is told of each body handed to main (this thread's handle on it is dead then). */
  constructor(send: (m: FromDoor) => void, pool: Int32Array, max: number, release?: SharedRelease) {
    this.#send = send;
    this.#pool = pool;
    this.#max = max;
    this.#dropped = release;
  }

  /** Takes the body of a write (true), leaves the request to main (false), or decides once a chunked body ended. */
  take(m: DoorMount, req: IncomingMessage, res: ServerResponse, path: string): Maybe<boolean> {
    const h = req.headers;
    if (req.method === 'DELETE') return false;
    const basic = m.writes?.basic;
    if (basic) {
      const given = parseBasicAuthorization(h.authorization);
      if (typeof given === 'string' || !basicCredentialsMatch(given, basic)) return false;
    }
    const te = h['transfer-encoding'];
    if (te !== undefined) return te.toLowerCase() === 'chunked' ? this.#chunked(m, req, res, path) : false;
    const cl = h['content-length'];
    const length = cl === undefined ? NaN : Number(cl);
    if (!Number.isSafeInteger(length) || length < 0 || length > (m.uploadMax ?? this.#max) || !this.#reserve(length)) return false;
    this.#send({ t: 'begin', mount: m.name, path });
    goOn(req, res);
    const data = new SharedArrayBuffer(length);
    const view = new Uint8Array(data);
    let at = 0;
    req.on('data', (c: Buffer) => {
      // node's parser holds the body to Content-Length; the check keeps a bug from writing out of bounds
      if (at + c.length > length) { res.destroy(); return; }
      view.set(c, at);
      at += c.length;
    });
    req.once('end', () => { if (at === length) (req as Held)[BODY] = data; });
    req.once('close', () => {
      if ((req as Held)[BODY] !== undefined) return;
      // an aborted upload never reaches main: the old file stays
      this.#release(length);
      this.#send({ t: 'abandon', mount: m.name, path });
    });
    return true;
  }

  #reserve(n: number): boolean {
    if (n > this.#max) return false;
    if (Atomics.add(this.#pool, 0, n) + n <= this.#max) return true;
    Atomics.sub(this.#pool, 0, n);
    return false;
  }

  #release(n: number): void {
    Atomics.sub(this.#pool, 0, n);
  }

  #chunked(m: DoorMount, req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    goOn(req, res);
    this.#send({ t: 'begin', mount: m.name, path });
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const stop = () => { req.off('data', onData); req.off('end', onEnd); req.off('close', onClose); };
      const giveUp = () => {
        stop();
        this.#release(size);
        this.#send({ t: 'abandon', mount: m.name, path });
      };
      const onData = (c: Buffer) => {
        if (size + c.length <= (m.uploadMax ?? this.#max) && this.#reserve(c.length)) { size += c.length; chunks.push(c); return; }
        req.pause();
        giveUp();
        chunks.push(c);
        // back in front of the stream in their order, last first: main gets the whole body
        for (let i = chunks.length - 1; i >= 0; i--) req.unshift(chunks[i]!);
        resolve(false);
      };
      const onEnd = () => {
        stop();
        const data = new SharedArrayBuffer(size);
        const view = new Uint8Array(data);
        let at = 0;
        for (const c of chunks) { view.set(c, at); at += c.length; }
        (req as Held)[BODY] = data;
        resolve(true);
      };
      // the client left before the body ended: nothing reaches main, the old file stays
      const onClose = () => { giveUp(); resolve(true); };
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('close', onClose);
    });
  }

  /** Hands the received body to main and waits for its verdict (committed even when the client left). */
  write(m: DoorMount, path: string, req: IncomingMessage, remote: string): Promise<FsWriteResult> {
    const held = req as Held;
    const whenWhole = held[BODY] !== undefined || req.complete ? Promise.resolve() : new Promise<void>((r) => req.once('end', () => r()));
    return whenWhole.then(() => {
      const data = held[BODY];
      if (data === undefined) throw new ApiError(400, 'Bad Request', ['the upload ended early'], 'FS_WRITE');
      const id = `${this.#prefix}-${++this.#next}`;
      return new Promise<FsWriteResult>((resolve, reject) => {
        // main's app closed meanwhile (a reload drops the door's channel): no verdict comes
        const timer = setTimeout(() => this.reply({ t: 'reply', id, status: 502, error: { code: 502, message: 'Bad Gateway', details: ['the main thread did not answer'] } }), VERDICT_MS);
        this.#pending.set(id, { resolve, reject, timer, bytes: data.byteLength });
        this.#send({ t: 'commit', id, mount: m.name, path, remote, headers: req.headers, data });
      });
    });
  }

  delete(): Promise<boolean> {
    return Promise.reject(new ApiError(502, 'Bad Gateway', ['deletes are main\'s'], 'FS_THREAD'));
  }

  /** Main's verdict on a commit (verdicts for other threads' uploads are not here). */
  reply(r: Reply): void {
    const p = this.#pending.get(r.id);
    if (!p) return;
    clearTimeout(p.timer);
    this.#pending.delete(r.id);
    this.#dropped?.dropped(p.bytes);
    if (r.error) p.reject(new ApiError(r.status, r.error.message, r.error.details, 'FS_WRITE', r.errorHeaders));
    else p.resolve({ created: r.status === 201 });
  }
}
