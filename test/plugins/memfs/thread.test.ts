import t from 'tap';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServingThreads, ThreadModule } from '../../../sdk/index.ts';
import { MimeTable, fsServeHooksRef, playlistsOnly, preServeSeesEveryFile } from '../../../sdk/index.ts';
import { MemFilesystem } from '../../../plugins/memfs/service.ts';
import { MemfsReplica } from '../../../plugins/memfs/replica.ts';
import memfsThread from '../../../plugins/memfs/thread.ts';
import { ENTRY_BYTES } from '../../../plugins/memfs/entry.ts';

/** The memfs thread module wired to a replica in this thread, as the core wires it to a worker. */
function setup() {
  const { port1, port2 } = new MessageChannel();
  let module: ThreadModule | undefined;
  const threads: ServingThreads = {
    count: 1,
    routeHeads: () => [], onTraffic: () => {},
    register: (m) => { module = m; return { broadcast: (d) => port1.postMessage(d), onMessage: () => {}, close: () => port1.close() }; },
  };
  const replica = new MemfsReplica();
  const fs = new MemFilesystem({ files: new Map(), seq: 0 }, { limit: 0, purge: false, mime: MimeTable.load(''), replica });
  replica.attach(threads, { corsOrigins: [] }, () => fs.entries(), () => 'all');
  const handler = memfsThread({
    init: module!.init, snapshot: module!.snapshot?.(),
    onMessage: (fn) => port2.on('message', fn),
    send: () => {},
    drain: () => { for (let r = receiveMessageOnPort(port2); r; r = receiveMessageOnPort(port2)) port2.emit('message', r.message); },
  });
  const get = (path: string) => {
    let status = 0;
    let body: Buffer | undefined;
    const req = { method: 'GET', url: `/memfs${path}`, headers: {} } as IncomingMessage;
    const res = { writeHead: (s: number) => { status = s; }, end: (b?: Buffer) => { body = b; } } as unknown as ServerResponse;
    const taken = handler(req, res);
    return { taken, status, body: body?.toString() };
  };
  return { fs, get, close: () => { port1.close(); port2.close(); } };
}

t.test('a thread answers from the bytes main committed last, synchronously (it drains before answering)', async (t) => {
  const { fs, get, close } = setup();
  t.teardown(close);
  t.same(get('/a.m3u8'), { taken: false, status: 0, body: undefined }, 'a miss goes to main');
  for (let n = 1; n <= 5; n++) {
    await fs.writeFile('/a.m3u8', Buffer.from(`v${n}`));
    // no tick in between: the broadcast is still in the channel
    t.same(get('/a.m3u8'), { taken: true, status: 200, body: `v${n}` });
  }
  await fs.deleteFile('/a.m3u8');
  t.equal(get('/a.m3u8').taken, false, 'deleted: main answers (404)');
});

t.test('bodies live in shared memory with threads, uploads included', async (t) => {
  const { fs, close } = setup();
  t.teardown(close);
  await fs.writeFile('/w.ts', Buffer.from('x'.repeat(100)));
  await fs.writeStream('/s.ts', [Buffer.from('ab'), Buffer.from('cd')], { length: 4 });
  await fs.writeStream('/c.ts', [Buffer.from('ab'), Buffer.from('cd')]);
  for (const p of ['/w.ts', '/s.ts', '/c.ts']) t.ok((await fs.readFile(p))!.buffer instanceof SharedArrayBuffer, p);
  const plain = new MemFilesystem({ files: new Map(), seq: 0 }, { limit: 0, purge: false, mime: MimeTable.load('') });
  await plain.writeFile('/w.ts', Buffer.from('x'));
  t.notOk((await plain.readFile('/w.ts'))!.buffer instanceof SharedArrayBuffer, 'without threads: plain Buffers');
});

t.test('a purge reaches the threads', async (t) => {
  const { port1, port2 } = new MessageChannel();
  t.teardown(() => { port1.close(); port2.close(); });
  const replica = new MemfsReplica();
  // room for one 6-byte file and its entry, not two
  const fs = new MemFilesystem({ files: new Map(), seq: 0 }, { limit: ENTRY_BYTES + 20, purge: true, mime: MimeTable.load(''), replica });
  const sent: Array<{ op: string; path?: string }> = [];
  replica.attach({ count: 1, routeHeads: () => [], onTraffic: () => {}, register: () => ({ broadcast: (d) => sent.push(d as { op: string }), onMessage: () => {}, close: () => {} }) }, { corsOrigins: [] }, () => fs.entries(), () => 'all');
  await fs.writeFile('/1.ts', Buffer.alloc(6));
  await fs.writeFile('/2.ts', Buffer.alloc(6));
  t.same(sent.map((s) => `${s.op} ${s.path}`), ['put /1.ts', 'del /1.ts', 'put /2.ts']);
});

t.test('preServe taps marked playlistsOnly let threads answer other files; any other tap keeps them on main', async (t) => {
  const hooks = fsServeHooksRef.create();
  t.notOk(preServeSeesEveryFile(hooks));
  hooks.preServe.tap('sessions', playlistsOnly(() => undefined));
  t.notOk(preServeSeesEveryFile(hooks), 'playlists only');
  hooks.preServe.tap('vendor', () => undefined);
  t.ok(preServeSeesEveryFile(hooks), 'a tap that may refuse any file');
});
