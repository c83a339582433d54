import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { request, type TestLike } from '../../helpers/app.ts';
import { startCli, type CliApp } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';

const PLUGIN = fileURLToPath(new URL('../../../examples/http-ts-ingest/index.ts', import.meta.url));

export interface IngestCli extends CliApp {
  port: number;
  log(): Promise<string[]>;
  /** The streams `GET /api/v3/httpts` lists. */
  live(): Promise<{ name: string; bytes_rx: number; readers: number }[]>;
}

/** The service as its own OS process (a crash is an exit) with this plugin loaded from its folder. */
export async function startIngestCli(t: TestLike, settings: Record<string, unknown> = {}, config: Record<string, unknown> = {}): Promise<IngestCli> {
  const app = await startCli(t, { ...config, plugins: ['*', { module: PLUGIN, config: settings }] });
  const log = async () => (await request(app.url, 'GET', '/api/v3/log')).body as string[];
  const live = async () => (await request(app.url, 'GET', '/api/v3/httpts')).body as { name: string; bytes_rx: number; readers: number }[];
  return Object.assign(app, { port: Number(new URL(app.url).port), log, live });
}

/** A raw TCP client of the service: what it received, whether the server closed it. */
export interface Raw {
  socket: Socket;
  /** `127.0.0.1:<its port>`, as the service logs it. */
  remote: string;
  received(): string;
  bytes(): number;
  closed: Promise<void>;
  isClosed(): boolean;
}

export async function raw(t: TestLike, port: number, opts: { read?: boolean } = {}): Promise<Raw> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  let text = '';
  let bytes = 0;
  let gone = false;
  socket.on('error', () => {});
  if (opts.read === false) socket.pause();
  else socket.on('data', (d: Buffer) => { bytes += d.length; if (text.length < 4096) text += d.toString('latin1'); });
  const closed = new Promise<void>((resolve) => socket.once('close', () => { gone = true; resolve(); }));
  t.teardown(() => { socket.destroy(); });
  return { socket, remote: `127.0.0.1:${socket.localPort}`, received: () => text, bytes: () => bytes, closed, isClosed: () => gone };
}

/** The head of a chunked PUT of stream `name`. */
export function putHead(name: string, extra = ''): string {
  return `PUT /ingest/ts/${name} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n${extra}\r\n`;
}

/** One chunk of chunked transfer coding. */
export function chunk(data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
}

/** Two seconds of a small H.264 test picture as MPEG-TS, made by ffmpeg. */
export function tsSample(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const ff = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-t', '2',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-f', 'mpegts', 'pipe:1'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    ff.stdout.on('data', (d: Buffer) => out.push(d));
    ff.on('error', reject);
    ff.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`ffmpeg ${code}`))));
  });
}

/** Log lines naming `remote` that contain `text`. */
export function linesOf(log: string[], remote: string, text: string): string[] {
  return log.filter((l) => l.includes(`remote="${remote}"`) && l.includes(text));
}

/** Waits until the stream is no longer listed. */
export async function unlisted(app: IngestCli, name: string): Promise<void> {
  await waitFor(async () => !(await app.live()).some((s) => s.name === name), { what: `${name} unlisted` });
}
