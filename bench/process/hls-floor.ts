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

export interface Floor {
  pid: number;
  /** Starts `count` ffmpegs writing HLS to the floor server; the function stops them. */
  run(count: number, sample: string, hlsOptions: (name: string) => string[]): () => Promise<void>;
  stop(): void;
}

export async function startFloor(): Promise<Floor> {
  const server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
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
