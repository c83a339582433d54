import { spawn, type ChildProcess } from 'node:child_process';

/**
 * The floor of the HLS upload path in Node.js (bench/process/hls-memfs.ts): a bare `node:http`
 * server in its own process doing what memfs does for ffmpeg's uploads and no more (the Basic
 * challenge as a 401 with the interface's Error body, the body kept in a Map, 201 or 204,
 * DELETE, GET of a kept file or 404), and ffmpegs started here (not by the service) with the same input and HLS options,
 * writing to it with their credential in the HLS muxer's `-headers` and none in the URL, as the
 * service's children do (core/process/preauth.ts): one request per upload, no 100-continue.
 */

const SERVER = `
const AUTH = 'Basic ' + Buffer.from('u:p').toString('base64');
const ERR = '{"code":401,"message":"Unauthorized","details":["Unauthorized"]}';
const files = new Map();
const handle = (q, s) => {
  if (q.headers.authorization !== AUTH) {
    s.writeHead(401, { 'www-authenticate': 'Basic realm=Restricted', 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    s.end(ERR);
    return;
  }
  if (q.method === 'GET') { const f = files.get(q.url); s.writeHead(f ? 200 : 404); s.end(f); return; }
  if (q.method === 'DELETE') { s.end(files.delete(q.url) ? 'ok' : ''); return; }
  if (q.headers.expect) s.writeContinue();
  const chunks = [];
  q.on('data', (d) => chunks.push(d));
  q.on('end', () => { const had = files.has(q.url); files.set(q.url, Buffer.concat(chunks)); s.writeHead(had ? 204 : 201); s.end(); });
};
require('node:http').createServer(handle).on('checkContinue', handle).listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;

/**
 * The floor under `node:http`: the same work on bare `node:net` sockets with a minimal HTTP/1.1
 * reading of its own (request line, the headers it needs, a body by length or chunked; no header
 * limits, no pipelining checks: a measuring stick, never a server to deploy). What is left is what
 * the runtime and the kernel spend per connection and per read.
 */
const NET_SERVER = `
const AUTH = 'Basic ' + Buffer.from('u:p').toString('base64');
const files = new Map();
const END = Buffer.from('\\r\\n\\r\\n');
require('node:net').createServer((sock) => {
  let buf = Buffer.alloc(0), state = 'head', path = '', parts = [], left = 0;
  const answer = (code, body = '') => sock.write('HTTP/1.1 ' + code + ' X\\r\\ncontent-length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' + body, 'latin1');
  const done = () => { const had = files.has(path); files.set(path, Buffer.concat(parts)); parts = []; state = 'head'; answer(had ? 204 : 201); };
  sock.on('error', () => {});
  sock.on('data', (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    for (;;) {
      if (state === 'head') {
        const e = buf.indexOf(END);
        if (e < 0) return;
        const lines = buf.latin1Slice(0, e).split('\\r\\n');
        buf = buf.subarray(e + 4);
        const [method, p] = lines[0].split(' ');
        path = p;
        const h = {};
        for (const l of lines.slice(1)) { const c = l.indexOf(':'); h[l.slice(0, c).toLowerCase()] = l.slice(c + 1).trim(); }
        if (h.authorization !== AUTH) { answer(401); sock.end(); return; }
        if (method === 'DELETE') { answer(200, files.delete(path) ? 'ok' : ''); continue; }
        if (h['transfer-encoding'] === 'chunked') { state = 'size'; continue; }
        left = Number(h['content-length'] || 0); state = 'body';
        if (left === 0) { done(); continue; }
      }
      if (state === 'body' || state === 'chunk') {
        const n = Math.min(left, buf.length);
        parts.push(buf.subarray(0, n)); buf = buf.subarray(n); left -= n;
        if (left > 0) return;
        if (state === 'body') { done(); continue; }
        state = 'crlf';
      }
      if (state === 'crlf') { if (buf.length < 2) return; buf = buf.subarray(2); state = 'size'; }
      if (state === 'size') {
        const e = buf.indexOf('\\r\\n');
        if (e < 0) return;
        left = parseInt(buf.latin1Slice(0, e), 16); buf = buf.subarray(e + 2);
        if (left > 0) { state = 'chunk'; continue; }
        if (buf.length < 2) { state = 'crlf-end'; return; }
        buf = buf.subarray(2); done(); continue;
      }
      if (state === 'crlf-end') { if (buf.length < 2) return; buf = buf.subarray(2); done(); continue; }
      return;
    }
  });
}).listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;

export interface Floor {
  pid: number;
  /** Starts `count` ffmpegs writing HLS to the floor server; the function stops them. */
  run(count: number, sample: string, hlsOptions: (name: string) => string[]): () => Promise<void>;
  stop(): void;
}

/** `net`: the `node:net` floor (NET_SERVER) instead of the `node:http` one. */
export async function startFloor(kind: 'http' | 'net' = 'http'): Promise<Floor> {
  const server = spawn(process.execPath, ['-e', kind === 'net' ? NET_SERVER : SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    server.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    server.once('exit', (code) => reject(new Error(`the floor server exited (${code})`)));
  });
  const base = `http://127.0.0.1:${port}/memfs/bench`;
  return {
    pid: server.pid!,
    run(count, sample, hlsOptions) {
      const ffmpegs: ChildProcess[] = [];
      for (let i = 0; i < count; i++) {
        const name = `floor-${i}`;
        const auth = `Authorization: Basic ${Buffer.from('u:p').toString('base64')}\r\n`;
        const args = [...hlsOptions(name).map((a) => a.replace('{memfs}/bench', base)), '-headers', auth];
        ffmpegs.push(spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', sample, ...args, `${base}/${name}.m3u8`], { stdio: ['ignore', 'ignore', 'inherit'] }));
      }
      return () => Promise.all(ffmpegs.map((f) => new Promise<void>((resolve) => {
        if (f.exitCode !== null || f.signalCode !== null) return resolve();
        f.once('exit', () => resolve());
        f.kill('SIGKILL');
      }))).then(() => undefined);
    },
    stop: () => { server.kill(); },
  };
}
