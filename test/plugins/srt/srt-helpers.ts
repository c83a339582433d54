import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { placeholdersRef } from '../../../sdk/index.ts';

export const FFMPEG = '/usr/bin/ffmpeg';
export const ADDON = fileURLToPath(new URL('../../../plugins/srt/addon/build/Release/srt_addon.node', import.meta.url));
export const PASS = 'secret-passphrase';
export const TOKEN = 'tok,en';

/** Starts the service with SRT on 127.0.0.1:0 (token and passphrase unless overridden). */
export async function startSrtApp(t: TestLike, srt: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<TestApp & { srtPort: number }> {
  const app = await startApp(t, { config: { ...extra, srt: { enable: true, address: '127.0.0.1:0', token: TOKEN, passphrase: PASS, ...srt } } });
  const ph = app.service.app.kernel.services.resolve(placeholdersRef) as { get(n: string): { value(s: string): string } };
  const port = Number(/:(\d+)\?/.exec(ph.get('srt').value('input'))![1]);
  return Object.assign(app, { srtPort: port });
}

/** An SRT caller URL for ffmpeg (latency in µs; generous so a loaded box does not drop). */
export function srtUrl(port: number, streamid: string, extra = `&passphrase=${PASS}`): string {
  return `srt://127.0.0.1:${port}?mode=caller&transtype=live&latency=400000&streamid=${streamid}${extra}`;
}

export const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10',
  '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p'];

export interface Run { code: number | null; stderr: string; done: Promise<void>; kill(): void }

/** Spawns ffmpeg; `done` resolves when it exits (killed at teardown or at the deadline). */
export function ffmpeg(t: TestLike, args: string[], timeoutMs = 60_000): Run {
  const child = spawn(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'warning', '-y', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  const run: Run = { code: null, stderr: '', done: Promise.resolve(), kill: () => child.kill('SIGKILL') };
  child.stderr.on('data', (d: Buffer) => { run.stderr = (run.stderr + d.toString()).slice(-4000); });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  run.done = new Promise((resolve) => child.on('close', (code) => { clearTimeout(timer); run.code = code; resolve(); }));
  t.teardown(() => { clearTimeout(timer); child.kill('SIGKILL'); return run.done; });
  return run;
}

export interface Caller { id: number; bytes: Buffer[]; closed: Promise<string>; stop(): void; send(data: Buffer): number }

/**
 * A light caller through the addon itself: raw bytes, no remuxing. `localHost` sends from another
 * loopback address (127.0.0.2: a stranger to the per-address rules, which spare 127.0.0.1).
 */
export function srtCaller(port: number, streamid: string, passphrase = PASS, localHost?: string): Caller {
  const addon = createRequire(import.meta.url)(ADDON) as { SrtServer: new (o: object, f: (...a: any[]) => void) => any };
  const bytes: Buffer[] = [];
  let closed!: (why: string) => void;
  const done = new Promise<string>((r) => { closed = r; });
  const opts = { host: '127.0.0.1', port, latencyMs: 400, passphrase, token: '', queue: 4096, streamid, ...(localHost ? { localHost } : {}) };
  const sock = new addon.SrtServer(opts, (type: string, _id: number, text: string, extra: Buffer) => {
    if (type === 'data') bytes.push(extra);
    else if (type === 'close') closed(text);
  });
  const id = sock.start() as number;
  return { id, bytes, closed: done, stop: () => sock.stop(), send: (data) => sock.send(id, data) as number };
}
