import t from 'tap';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { HttpForwarder, type ForwardOptions, type ForwardResult } from '../../sdk/forward.ts';
import { waitFor } from '../helpers/wait.ts';

/*
 * The SDK's forwarder between two raw node servers on port 0: a front that forwards everything
 * (answering 502 itself when the upstream failed before answering) and an upstream per test.
 */

/** What the helpers need of a test. */
type Test = { teardown(fn: () => unknown): void };

async function listen(t: Test, server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return (server.address() as AddressInfo).port;
}

interface Front { port: number; results: ForwardResult[]; attempts: number }

/** A front server forwarding to `upstream`, with `x-attempt` made per attempt and `x-secret` stripped. */
async function front(t: Test, upstream: number, extra: Partial<ForwardOptions> = {}): Promise<Front> {
  const forwarder = new HttpForwarder({ connectMs: 2000, halfOpenMs: 500 });
  t.teardown(() => forwarder.close());
  const f: Front = { port: 0, results: [], attempts: 0 };
  const options = (expect: boolean): ForwardOptions => ({
    to: `http://127.0.0.1:${upstream}`, expect, strip: ['x-secret'], headers: () => ({ 'x-attempt': String(++f.attempts) }), ...extra,
  });
  const handle = (expect: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    void forwarder.forward(req, res, options(expect)).then((r) => {
      f.results.push(r);
      if (!r.answered) res.writeHead(502).end(`bad gateway: ${r.error.message}`);
    });
  };
  const server = createServer(handle(false));
  server.on('checkContinue', handle(true));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => forwarder.tunnel(req, socket, head, options(false)));
  f.port = await listen(t, server);
  return f;
}

interface Answer { status: number; headers: IncomingHttpHeaders; body: string; continued: boolean }

/** One request on a connection of its own; `body` chunks are written after the 100 when `expect`. */
function ask(port: number, method: string, path: string, headers: Record<string, string> = {}, body: string[] = []): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const expect = headers.expect !== undefined;
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, continued }));
    });
    req.on('error', reject);
    const send = () => { for (const c of body) req.write(c); req.end(); };
    if (expect) req.on('continue', () => { continued = true; send(); });
    else send();
  });
}

t.test('streams both ways: hop-by-hop and stripped headers stay behind, per-attempt headers go', async (t) => {
  let seen: IncomingHttpHeaders = {};
  const up = createServer((req, res) => {
    seen = req.headers;
    res.writeHead(201, { 'x-up': 'yes', 'keep-alive': 'timeout=1' });
    req.on('data', (c: Buffer) => res.write(c.toString().toUpperCase()));
    req.on('end', () => res.end());
  });
  const f = await front(t, await listen(t, up));
  const r = await ask(f.port, 'POST', '/p?q=1', { 'transfer-encoding': 'chunked', 'x-secret': 'client', 'x-keep': '1', 'proxy-connection': 'x', te: 'trailers' }, ['one ', 'two']);
  t.same([r.status, r.body, r.headers['x-up'], r.headers['keep-alive']], [201, 'ONE TWO', 'yes', undefined]);
  t.same([seen['x-attempt'], seen['x-keep'], seen['x-secret'], seen['proxy-connection'], seen.te], ['1', '1', undefined, undefined, undefined]);
  t.equal(seen['transfer-encoding'], 'chunked', 'the body streamed as it came');
  t.same(f.results, [{ answered: true }]);
});

t.test('a body given whole goes with its length', async (t) => {
  let seen: IncomingHttpHeaders = {};
  const up = createServer((req, res) => { seen = req.headers; req.pipe(res); });
  const forwarder = new HttpForwarder();
  t.teardown(() => forwarder.close());
  const upPort = await listen(t, up);
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const r = await forwarder.forward(req, res, { to: { host: '127.0.0.1', port: upPort }, body: Buffer.concat(chunks) });
    t.same(r, { answered: true });
  });
  const r = await ask(await listen(t, server), 'PUT', '/x', { 'transfer-encoding': 'chunked' }, ['ab', 'cd']);
  t.same([r.body, seen['content-length'], seen['transfer-encoding']], ['abcd', '4', undefined]);
});

t.test('100-continue: the upstream decides; its 100 is relayed, or its refusal comes instead', async (t) => {
  const up = createServer((req, res) => req.pipe(res));
  up.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers['x-refuse']) { res.writeHead(413, { connection: 'close' }).end('too large'); return; }
    res.writeContinue();
    req.pipe(res);
  });
  const f = await front(t, await listen(t, up));
  const ok = await ask(f.port, 'PUT', '/a', { expect: '100-continue', 'content-length': '5' }, ['hello']);
  t.same([ok.status, ok.body, ok.continued], [200, 'hello', true]);
  const refused = await ask(f.port, 'PUT', '/b', { expect: '100-continue', 'content-length': '5', 'x-refuse': '1' }, ['hello']);
  t.same([refused.status, refused.body, refused.continued], [413, 'too large', false], 'no 100, the refusal');
});

t.test('an upload refused before its end: the rest is drained and the client reads the refusal, no reset', async (t) => {
  const up = createServer((_req, res) => { res.writeHead(401, { 'content-type': 'text/plain' }).end('no'); });
  const f = await front(t, await listen(t, up));
  const size = 4 * 1024 * 1024;
  const sock = connect(f.port, '127.0.0.1');
  t.teardown(() => sock.destroy());
  let got = '';
  const outcome = await new Promise<string>((resolve) => {
    sock.on('data', (d: Buffer) => { got += d.toString('latin1'); });
    sock.on('error', (err) => resolve(`error ${err.message}`));
    sock.on('end', () => resolve('end'));
    sock.write(`PUT /up HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 1);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!sock.write(chunk)) { sock.once('drain', pump); return; }
      }
    };
    pump();
  });
  t.equal(outcome, 'end', 'closed in order after the body');
  t.match(got, /^HTTP\/1\.1 401 [^]*connection: close\r\n[^]*\r\n\r\n(2\r\n)?no\r\n/i);
});

t.test('a read on a kept-alive connection the upstream just closed is sent again; a write is not', async (t) => {
  const perSocket = new WeakMap<Socket, number>();
  const up = createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    // the second request on a connection: closed without an answer, as an idle timeout would
    if (n === 2) { req.socket.destroy(); return; }
    req.resume();
    res.end(`${req.method} ${req.headers['x-attempt']}`);
  });
  const f = await front(t, await listen(t, up));
  t.equal((await ask(f.port, 'GET', '/1')).body, 'GET 1');
  t.equal((await ask(f.port, 'GET', '/2')).body, 'GET 3', 'the second GET, retried with fresh headers');
  const post = await ask(f.port, 'POST', '/3', { 'content-length': '2' }, ['hi']);
  t.equal(post.status, 502, 'a POST is not sent twice');
  t.match(f.results.at(-1), { answered: false, error: Error });
});

t.test('an upstream that cannot be reached: the caller answers', async (t) => {
  const gone = createServer();
  const port = await listen(t, gone);
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  const f = await front(t, port);
  const r = await ask(f.port, 'GET', '/x');
  t.equal(r.status, 502);
  t.match(r.body, /ECONNREFUSED/);
});

t.test('a client that goes away cancels its upstream request', async (t) => {
  let closed = false;
  const up = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: 1\n\n');
    req.socket.on('close', () => { closed = true; });
  });
  const f = await front(t, await listen(t, up));
  await new Promise<void>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: f.port, path: '/events', agent: false }, (res) => {
      res.once('data', () => { req.destroy(); resolve(); });
    });
    req.on('error', () => {});
    req.on('close', resolve);
    setTimeout(() => reject(new Error('no event')), 10_000).unref();
    req.end();
  });
  await waitFor(() => closed, { timeout: 10_000, what: 'the upstream request cancelled' });
  t.pass('cancelled');
});

t.test('an upgrade is tunnelled with the per-attempt headers, joined both ways until close', async (t) => {
  let seen: IncomingHttpHeaders = {};
  const up = createServer();
  up.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    seen = req.headers;
    socket.on('error', () => {});
    socket.on('end', () => socket.end());
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n${head.toString().toUpperCase()}`);
    socket.on('data', (d: Buffer) => socket.write(d.toString().toUpperCase()));
  });
  const f = await front(t, await listen(t, up));
  const sock = connect(f.port, '127.0.0.1');
  t.teardown(() => sock.destroy());
  let got = '';
  sock.on('data', (d: Buffer) => { got += d.toString(); });
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  sock.write('GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\nX-Secret: client\r\n\r\nearly');
  await waitFor(() => got.includes('EARLY'), { timeout: 10_000, what: 'the 101 and the early bytes' });
  t.match(got, /^HTTP\/1\.1 101 /);
  sock.write('later');
  await waitFor(() => got.includes('LATER'), { timeout: 10_000, what: 'bytes after the upgrade' });
  t.same([seen['x-attempt'], seen['x-secret'], seen.upgrade], ['1', undefined, 'echo'], 'signed once, the client\'s copy stripped, the upgrade kept');
  sock.end();
  await closed;
  t.pass('one side ended: the tunnel closes (after its grace at most)');
});
