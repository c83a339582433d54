import type { IncomingMessage, ServerResponse } from 'node:http';
// the SDK's files one by one, not its index: every module loaded here costs memory per thread
import { CorsPolicy } from '../../sdk/fs-cors.ts';
import { responseBytes } from '../../sdk/fs-hooks.ts';
import type { ThreadFastPath, ThreadModuleContext } from '../../sdk/serving-threads.ts';
import { plainHead, plainPath, plainUploadPath } from './plain.ts';
import { ThreadUploads, type CommitRequest, type UploadNotice } from './thread-upload.ts';
import type { ReplicaInit, ReplicaOp, ReplicaSnapshot, ThreadFile, ThreadMode } from './replica.ts';
import { ServedBatcher } from '../../sdk/fs-thread-serve.ts';

interface Held {
  data: Buffer;
  head: string[];
  zip: boolean;
}

function held(f: ThreadFile): Held {
  return { data: Buffer.from(f.data), head: f.head, zip: f.zip };
}

/**
 * memfs in a serving thread: plain GET/HEAD of `/memfs/*` from the shared bodies. Main's changes
 * are applied in sequence order, and those main published before a request are applied before it
 * is answered. Everything else returns false and goes to main: a miss too, so a file main already
 * has is never a 404 here (main owns the index and answers it); so do ranges, conditionals, gzip,
 * links, writes; with the file hooks tapped, playlists (and everything when a `preServe` tap may
 * refuse any file). Reads answered while hooks are tapped are reported to main's `onServed`.
 */
export default function memfsThread(ctx: ThreadModuleContext): ThreadFastPath {
  const init = ctx.init as ReplicaInit;
  const snap = ctx.snapshot as ReplicaSnapshot | undefined;
  const cors = new CorsPolicy(init.corsOrigins);
  const files = new Map<string, Held>();
  const published = new BigInt64Array(init.published);
  let seq = snap?.seq ?? 0;
  let mode: ThreadMode = snap?.mode ?? 'all';
  const reports = new ServedBatcher((batch) => ctx.send(batch));
  for (const [path, f] of snap?.files ?? []) files.set(path, held(f));
  const uploads = init.uploads ? new ThreadUploads((c: CommitRequest | UploadNotice) => ctx.send(c), cors, new Int32Array(init.threadBytes), init.uploads.maxBytes, init.uploads.basic) : undefined;
  ctx.onMessage((m) => {
    const op = m as ReplicaOp;
    if (op.op === 'reply') {
      uploads?.reply(op);
      return;
    }
    // the snapshot already holds everything up to its sequence
    if (op.seq <= seq) return;
    seq = op.seq;
    if (op.op === 'put') files.set(op.path, held(op.file));
    else if (op.op === 'del') files.delete(op.path);
    else mode = op.mode;
  });
  return (req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
    // main sent changes this thread has not handled yet: take them now, before answering
    if (Number(Atomics.load(published, 0)) > seq) ctx.drain();
    if (uploads) {
      const up = plainUploadPath(req);
      if (up !== undefined) return uploads.take(req, res, up);
    }
    if (mode === 'none') return false;
    const path = plainPath(req);
    if (path === undefined) return false;
    if (mode === 'segments') {
      // playlists pass preServe and transformPlaylist on main; a forwarded client is main's to resolve
      const h = req.headers;
      if (path.endsWith('.m3u8') || h['x-forwarded-for'] !== undefined || h['x-real-ip'] !== undefined) return false;
    }
    const file = files.get(path);
    if (file === undefined) return false;
    const head = plainHead(file, req, cors);
    if (head === undefined) return false;
    res.writeHead(200, head);
    const body = req.method === 'HEAD' ? 0 : file.data.length;
    if (body === 0) res.end();
    else res.end(file.data);
    if (mode === 'segments') {
      const url = req.url!;
      const q = url.indexOf('?');
      reports.add(req, path, q < 0 ? '' : url.slice(q + 1), responseBytes(res, body));
    }
    return true;
  };
}
