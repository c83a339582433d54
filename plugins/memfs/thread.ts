import type { IncomingMessage, ServerResponse } from 'node:http';
import { CorsPolicy, type ThreadFastPath, type ThreadModuleContext } from '../../sdk/index.ts';
import { plainHead, plainPath } from './fast-path.ts';
import type { ReplicaInit, ReplicaOp, ReplicaSnapshot, ThreadFile } from './replica.ts';

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
 * links, writes, and every read while the file-serving hooks are tapped (sessions count viewers
 * on main).
 */
export default function memfsThread(ctx: ThreadModuleContext): ThreadFastPath {
  const init = ctx.init as ReplicaInit;
  const snap = ctx.snapshot as ReplicaSnapshot | undefined;
  const cors = new CorsPolicy(init.corsOrigins);
  const files = new Map<string, Held>();
  const published = new BigInt64Array(init.published);
  let seq = snap?.seq ?? 0;
  let tapped = snap?.tapped ?? false;
  for (const [path, f] of snap?.files ?? []) files.set(path, held(f));
  ctx.onMessage((m) => {
    const op = m as ReplicaOp;
    // the snapshot already holds everything up to its sequence
    if (op.seq <= seq) return;
    seq = op.seq;
    if (op.op === 'put') files.set(op.path, held(op.file));
    else if (op.op === 'del') files.delete(op.path);
    else tapped = op.tapped;
  });
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    // main sent changes this thread has not handled yet: take them now, before answering
    if (Number(Atomics.load(published, 0)) > seq) ctx.drain();
    if (tapped) return false;
    const path = plainPath(req);
    if (path === undefined) return false;
    const file = files.get(path);
    if (file === undefined) return false;
    const head = plainHead(file, req, cors);
    if (head === undefined) return false;
    res.writeHead(200, head);
    if (req.method === 'HEAD') res.end();
    else res.end(file.data);
    return true;
  };
}
