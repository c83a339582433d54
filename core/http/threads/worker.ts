import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import type { ThreadFastPath, ThreadFastPathFactory } from '../../../sdk/serving-threads.ts';
import { Forwarder } from './forward.ts';
import type { ToWorker, WorkerInit } from './messages.ts';

/*
 * A serving thread: its own listener on the API port (reusePort), the modules plugins registered
 * (each a fast path over state main broadcasts), and everything else forwarded to main.
 */

interface Loaded {
  url: string;
  handler?: ThreadFastPath;
  listeners: Array<(m: unknown) => void>;
  /** Broadcasts that arrived while the module was still loading. */
  queue: unknown[];
}

const init = workerData as WorkerInit;
const port = parentPort!;
const forwarder = new Forwarder(Buffer.from(init.key), init.forwardPort);
const modules = new Map<string, Loaded>();
let handlers: ThreadFastPath[] = [];
const stats = { served: 0, forwarded: 0 };

function rebuild(): void {
  handlers = [...modules.values()].flatMap((m) => (m.handler ? [m.handler] : []));
}

async function load(name: string, url: string, moduleInit: unknown, snapshot: unknown): Promise<void> {
  const entry: Loaded = { url, listeners: [], queue: [] };
  modules.set(name, entry);
  rebuild();
  try {
    const factory = (await import(url)).default as ThreadFastPathFactory;
    // replaced or dropped meanwhile (a reload): this load is stale
    if (modules.get(name) !== entry) return;
    entry.handler = factory({ init: moduleInit, snapshot, onMessage: (fn) => { entry.listeners.push(fn); } });
    for (const m of entry.queue) for (const fn of entry.listeners) fn(m);
    entry.queue = [];
    rebuild();
  } catch (err) {
    port.postMessage({ t: 'error', message: `module ${name} (${url}): ${(err as Error).message}` });
  }
}

const server = createServer({ maxHeaderSize: 1024 * 1024, headersTimeout: 10_000, requestTimeout: 0 }, (req: IncomingMessage, res: ServerResponse) => {
  for (let i = 0; i < handlers.length; i++) {
    if (handlers[i]!(req, res)) {
      stats.served++;
      return;
    }
  }
  stats.forwarded++;
  forwarder.forward(req, res);
});

port.on('message', (m: ToWorker) => {
  switch (m.t) {
    case 'module': void load(m.name, m.url, m.init, m.snapshot); break;
    case 'drop': modules.delete(m.name); rebuild(); break;
    case 'msg': {
      const entry = modules.get(m.name);
      if (!entry) break;
      if (entry.handler) for (const fn of entry.listeners) fn(m.data);
      else entry.queue.push(m.data);
      break;
    }
    case 'stats': port.postMessage({ t: 'stats', id: m.id, ...stats }); break;
    case 'close':
      server.close(() => {
        forwarder.close();
        port.close();
      });
      server.closeAllConnections();
      break;
  }
});

server.listen({ host: init.host, port: init.port, reusePort: true }, () => {
  const pending = init.modules.map((mod) => load(mod.name, mod.url, mod.init, mod.snapshot));
  void Promise.all(pending).then(() => port.postMessage({ t: 'ready' }));
});
server.on('error', (err) => {
  port.postMessage({ t: 'error', message: `listen: ${err.message}` });
  process.exit(1);
});
