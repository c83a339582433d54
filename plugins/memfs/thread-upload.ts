import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { normalizeIp } from '../../sdk/client-address.ts';
import type { CorsPolicy } from '../../sdk/fs-cors.ts';
import type { ErrorBody } from '../../sdk/errors.ts';
import type { BasicCredentials } from '../../sdk/auth.ts';
import { basicCredentialsMatch, parseBasicAuthorization } from '../../sdk/basic-credentials.ts';

/** A thread's upload, received whole into shared memory, for main to commit. */
export interface CommitRequest {
  t: 'commit';
  id: string;
  path: string;
  url: string;
  remote: string;
  headers: IncomingHttpHeaders;
  data: SharedArrayBuffer;
}

/**
 * What a thread tells main about an upload it takes: `begin` when it starts receiving it (a read
 * that misses on main waits for the path), then either the commit or `abandon` (the client left,
 * or the body went to main after all).
 */
export type UploadNotice = { t: 'begin'; path: string } | { t: 'abandon'; path: string };

/** Main's verdict on a commit, sent on the replica channel after the write's own broadcast. */
export interface CommitReply {
  op: 'reply';
  id: string;
  status: number;
  error?: ErrorBody;
  errorHeaders?: Record<string, string>;
}

const VERDICT_MS = 30_000;
const NO_VERDICT: ErrorBody = { code: 502, message: 'Bad Gateway', details: ['the main thread did not answer'] };

/**
 * memfs uploads in a serving thread, taken while writes need no credentials or, with
 * `storage.memory.auth.enable` on, when they carry exactly the configured Basic credential (else
 * main answers them: 401, 400): a PUT/POST of a plain path whose body fits the threads' budget
 * (`maxBytes` for all uploads every thread receives at once, one shared count that main's memfs
 * limit and in-flight bound include too; a Content-Length or a chunked body) is
 * received into one SharedArrayBuffer, then main commits it (index, quotas, 507,
 * purge, `onWritten` stay main's) and answers; the thread sends main's status with the headers
 * main's route sends. The reply comes on the replica channel after the write's broadcast, so the
 * file is on this thread before the client learns it was stored. Everything else goes to main.
 */
export class ThreadUploads {
  readonly #pending = new Map<string, { url: string; req: IncomingMessage; res: ServerResponse; timer: NodeJS.Timeout }>();
  readonly #prefix = randomBytes(6).toString('hex');
  #next = 0;
  /**
   * Bytes of the uploads all serving threads are receiving (one Int32 in shared memory): at most
   * `maxBytes` together. A committed upload's bytes are handed to main, which subtracts them when
   * it takes the commit; a thread gives back only what it does not commit.
   */
  readonly #pool: Int32Array;
  readonly #send: (m: CommitRequest | UploadNotice) => void;
  readonly #cors: CorsPolicy;
  readonly #maxBytes: number;
  readonly #basic: BasicCredentials | undefined;

  constructor(send: (m: CommitRequest | UploadNotice) => void, cors: CorsPolicy, pool: Int32Array, maxBytes: number, basic?: BasicCredentials) {
    this.#pool = pool;
    this.#send = send;
    this.#cors = cors;
    this.#maxBytes = maxBytes;
    this.#basic = basic;
  }

  /**
   * Takes the upload of `path` (true, or a promise: see `#chunked`), or leaves the request to main
   * (false, body unread).
   */
  take(req: IncomingMessage, res: ServerResponse, path: string): boolean | Promise<boolean> {
    const h = req.headers;
    // a client behind a proxy: main resolves its address
    if (h['x-forwarded-for'] !== undefined || h['x-real-ip'] !== undefined) return false;
    // memfs auth on: only the configured credential is taken here; main answers the rest (401, 400)
    if (this.#basic && !this.#authorized(h.authorization)) return false;
    const te = h['transfer-encoding'];
    // node frames a body only by its last coding; other codings stay main's, as before
    if (te !== undefined) return te.toLowerCase() === 'chunked' ? this.#chunked(req, res, path) : false;
    const cl = h['content-length'];
    if (cl === undefined) return false;
    const length = Number(cl);
    // beyond this thread's budget: main's own rules (its bytes-in-flight bound, an early 507) apply
    if (!Number.isSafeInteger(length) || length < 0 || !this.#reserve(length)) return false;
    let handed = false;
    this.#send({ t: 'begin', path });
    req.once('close', () => {
      if (handed) return;
      this.#release(length);
      this.#send({ t: 'abandon', path });
    });
    goOn(res, req);
    const data = new SharedArrayBuffer(length);
    const view = new Uint8Array(data);
    let at = 0;
    req.on('data', (c: Buffer) => {
      // node's parser holds the body to Content-Length; the check keeps a bug from writing out of bounds
      if (at + c.length > length) { res.destroy(); return; }
      view.set(c, at);
      at += c.length;
    });
    req.on('end', () => {
      // an aborted upload never reaches main: the old file stays
      if (at !== length) return;
      handed = true;
      this.#commit(req, res, path, data);
    });
    return true;
  }

  /** Takes `n` bytes of the threads' shared budget, or none (false) when they do not fit. */
  #reserve(n: number): boolean {
    if (n > this.#maxBytes) return false;
    const before = Atomics.add(this.#pool, 0, n);
    if (before + n <= this.#maxBytes) return true;
    Atomics.sub(this.#pool, 0, n);
    return false;
  }

  #release(n: number): void {
    Atomics.sub(this.#pool, 0, n);
  }

  #authorized(header: string | undefined): boolean {
    const given = parseBasicAuthorization(header);
    return typeof given !== 'string' && basicCredentialsMatch(given, this.#basic!);
  }

  /**
   * A chunked body (ffmpeg's HLS PUTs carry no length): received while it fits the budget, then
   * committed as one with a length. One that outgrows the budget goes to main whole: the bytes
   * read so far are put back in front of the request's stream and the promise says false, so the
   * forwarder streams them and the rest to main, which answers as for any chunked upload (its
   * in-flight bound, 507). True once the body ended (committed) or the client left (nothing sent).
   */
  #chunked(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    goOn(res, req);
    this.#send({ t: 'begin', path });
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let held = true;
      const release = () => {
        if (held) this.#release(size);
        held = false;
      };
      const stop = () => {
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('close', onClose);
      };
      const onData = (c: Buffer) => {
        if (this.#reserve(c.length)) {
          size += c.length;
          chunks.push(c);
          return;
        }
        req.pause();
        stop();
        release();
        this.#send({ t: 'abandon', path });
        chunks.push(c);
        // back in front of the stream in their order, last first (no joined copy)
        for (let i = chunks.length - 1; i >= 0; i--) req.unshift(chunks[i]!);
        chunks.length = 0;
        resolve(false);
      };
      const onEnd = () => {
        stop();
        const data = new SharedArrayBuffer(size);
        const view = new Uint8Array(data);
        let at = 0;
        for (const c of chunks) { view.set(c, at); at += c.length; }
        chunks.length = 0;
        // handed to main with the commit: main gives the bytes back when it takes them
        held = false;
        this.#commit(req, res, path, data);
        resolve(true);
      };
      // the client left before the body ended: nothing reaches main, the old file stays
      const onClose = () => {
        stop();
        release();
        this.#send({ t: 'abandon', path });
        chunks.length = 0;
        resolve(true);
      };
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('close', onClose);
    });
  }

  /**
   * Sends a whole body to main; the answer waits for main's verdict (`reply`). Committed even when
   * the client is gone by now, as main's route does: ffmpeg closes right after its last chunk.
   */
  #commit(req: IncomingMessage, res: ServerResponse, path: string, data: SharedArrayBuffer): void {
    const id = `${this.#prefix}-${++this.#next}`;
    // main's app closed meanwhile (a reload drops this module's channel): no verdict comes
    const timer = setTimeout(() => this.reply({ op: 'reply', id, status: 502, error: NO_VERDICT }), VERDICT_MS);
    this.#pending.set(id, { url: req.url!, req, res, timer });
    this.#send({ t: 'commit', id, path, url: req.url!, remote: normalizeIp(req.socket.remoteAddress ?? ''), headers: req.headers, data });
  }

  /** Answers a commit with main's verdict (replies for other threads' uploads are not here). */
  reply(m: CommitReply): void {
    const p = this.#pending.get(m.id);
    if (!p) return;
    clearTimeout(p.timer);
    this.#pending.delete(m.id);
    if (p.res.destroyed) return;
    const head = this.#head(p.req);
    if (m.error) {
      const body = JSON.stringify(m.error);
      p.res.writeHead(m.status, [...head, ...Object.entries(m.errorHeaders ?? {}).flat(),
        'content-type', 'application/json; charset=utf-8', 'content-length', String(Buffer.byteLength(body))]);
      p.res.end(body);
      return;
    }
    head.push('content-location', p.url);
    if (m.status === 201) head.push('content-type', 'text/plain; charset=utf-8', 'content-length', '0');
    p.res.writeHead(m.status, head);
    p.res.end();
  }

  /** Vary and CORS, as main's route sets them before anything else. */
  #head(req: IncomingMessage): string[] {
    const out = ['vary', 'Origin'];
    const origin = req.headers.origin;
    const allowed = origin === undefined ? undefined : this.#cors.allow(origin);
    if (allowed !== undefined) {
      out.push('access-control-allow-origin', allowed, 'access-control-allow-credentials', 'true', 'access-control-expose-headers', 'Content-Length');
    }
    return out;
  }
}

/** Taken here: a client waiting for `100 Continue` may send its body now (the thread's listener no longer sends it by itself). */
function goOn(res: ServerResponse, req: IncomingMessage): void {
  if (/100-continue/i.test(String(req.headers.expect ?? ''))) res.writeContinue();
}
