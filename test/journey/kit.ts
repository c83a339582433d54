import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, request, testThreads, type RequestOpts, type TestLike, type TestResponse } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { deepMerge } from '../../core/config/schema-walk.ts';
import { freeTcp } from '../helpers/net-proc.ts';

/*
 * The journey suite's service: the real CLI (`app/main.ts`) as its own OS process, every built-in
 * plugin on, auth on, every listener on a fixed port written as restreamer-ui writes them (`:port`),
 * so a config check that tries to bind a port the service itself holds is caught. It can be
 * stopped with SIGTERM and started again on the same config and db, as an operator restarts it.
 */

export const ADMIN = { username: 'admin', password: 'journey-admin-pw' };
export const MEMFS = { username: 'ffmpeg', password: 'journey-memfs-pw' };
export const RTMP_TOKEN = 'journey-rtmp-token';
export const SRT_TOKEN = 'journey-srt-token';
export const SRT_PASS = 'journey-srt-passphrase';
export const WEBRTC_TOKEN = 'journey-webrtc-token';
export const LLHLS_TOKEN = 'journey-llhls-token';

export interface Ports { http: number; rtmp: number; srt: number; /** The first of 20 loopback ports for the playout relays. */ playout: number }


export async function freeUdp(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Every built-in plugin on ("*" and the config each needs), listeners on `ports`; `extra` is merged on top. */
export function journeyConfig(dir: string, ports: Ports, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return deepMerge({
    plugins: ['*'], name: 'journey', address: `:${ports.http}`, update_check: false,
    db: { dir: join(dir, 'db') }, log: { level: 'info' }, http: { threads: testThreads() },
    api: { auth: { enable: true, ...ADMIN, jwt: { secret: 'journey-jwt-secret-0123456789' } } },
    storage: { disk: { dir: join(dir, 'disk') }, memory: { auth: { enable: true, ...MEMFS } } },
    rtmp: { enable: true, address: `:${ports.rtmp}`, token: RTMP_TOKEN },
    srt: { enable: true, address: `:${ports.srt}`, token: SRT_TOKEN, passphrase: SRT_PASS },
    webrtc: { enable: true, bind_address: '127.0.0.1', token: WEBRTC_TOKEN }, llhls: { enable: true, token: LLHLS_TOKEN },
    sessions: { enable: true, ip_ignorelist: [] },
    metrics: { enable: true, enable_prometheus: true, interval_sec: 1, range_sec: 60 },
    playout: { enable: true, min_port: ports.playout, max_port: ports.playout + 20 }, recordings: { enable: true },
    // on, with a ladder no journey stream matches: it must change nothing of what the journeys see
    ladders: { enable: true, ladders: [{ id: 'journey', pattern: 'abr/*', rungs: ['240p', 'audio'] }] },
    // on, its users deciding nothing yet (issue 49's first floors): every journey must see no difference
    iam: { enable: true },
  }, extra);
}

const MAIN = fileURLToPath(new URL('../../app/main.ts', import.meta.url));

/** One run of the CLI on a config file; `stop()` is SIGTERM and waits for the exit. */
export class ServiceRun {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  url = '';
  token = '';
  #err = '';

  constructor(configPath: string, cwd: string) {
    this.child = spawn(process.execPath, [MAIN, '--config', configPath], { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d: Buffer) => { this.#err = (this.#err + d.toString()).slice(-40_000); };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    this.exited = new Promise((r) => this.child.once('exit', (code) => r(code)));
  }

  stderr(): string { return this.#err; }

  /** Waits for the printed URL (the port of `address`, reached on 127.0.0.1) and logs in. */
  async ready(): Promise<void> {
    const printed = waitFor(() => /listening on https?:\/\/\S+:(\d+)/.exec(this.#err)?.[1], { timeout: 60_000, what: 'the service\'s URL' });
    const early = this.exited.then((code) => { throw new Error(`the service exited (${code}): ${this.#err.slice(-1000)}`); });
    const port = await Promise.race([printed, early]);
    this.url = `http://127.0.0.1:${port}`;
    this.token = await this.login();
  }

  async login(): Promise<string> {
    const r = await request(this.url, 'POST', '/api/login', { body: ADMIN });
    if (r.status !== 200) throw new Error(`login: ${r.status} ${r.text}`);
    return r.body.access_token as string;
  }

  /** A request with the admin's token (unless `opts.token` is '' or another). */
  req(method: string, path: string, opts: RequestOpts = {}): Promise<TestResponse> {
    return request(this.url, method, path, { token: this.token, ...opts });
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

export interface Journey {
  dir: string;
  configPath: string;
  ports: Ports;
  /** The run now (replaced by `restart`). */
  run: ServiceRun;
  /** SIGTERM, then a new run on the same config and db; answers the old run's exit code. */
  restart(): Promise<number | null>;
}

/** Writes the journey config in a temp folder and starts the CLI on it; killed and removed at teardown. */
export async function startJourney(t: TestLike, extra: (dir: string) => Record<string, unknown> = () => ({})): Promise<Journey> {
  const dir = await mkdtemp(join(tmpdir(), 'core-journey-'));
  await mkdir(join(dir, 'disk'), { recursive: true });
  const ports = { http: await freeTcp(), rtmp: await freeTcp(), srt: await freeUdp(), playout: 41000 + Math.floor(Math.random() * 400) * 20 };
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify(journeyConfig(dir, ports, extra(dir)), null, 2));
  const j: Journey = {
    dir, configPath, ports, run: new ServiceRun(configPath, dir),
    async restart() {
      const code = await j.run.stop();
      j.run = new ServiceRun(configPath, dir);
      await j.run.ready();
      return code;
    },
  };
  t.teardown(async () => {
    await j.run.kill();
    await rm(dir, { recursive: true, force: true });
  });
  await j.run.ready();
  return j;
}

export const rtmpUrl = (j: Journey, name: string) => `rtmp://127.0.0.1:${j.ports.rtmp}/${name}?token=${RTMP_TOKEN}`;
/** The LL-HLS playlist of a stream (plugin `llhls`), with its token. */
export const llhlsUrl = (j: Journey, name: string, file = 'index.m3u8') => `${j.run.url}/hls/${name}/${file}?token=${LLHLS_TOKEN}`;

/** An SRT caller URL (ffmpeg) for `name` in `mode` (`request` or `publish`), with the token and passphrase. */
export const srtUrl = (j: Journey, name: string, mode: 'request' | 'publish' = 'request') =>
  `srt://127.0.0.1:${j.ports.srt}?mode=caller&transtype=live&latency=400000&passphrase=${SRT_PASS}&streamid=${name},mode:${mode},token:${SRT_TOKEN}`;

/** ffprobe of a file or live URL: the codec type of each stream, by index ([] when it read nothing). */
export function tracks(t: TestLike, url: string, timeoutMs = 30_000): Promise<string[]> {
  const child = spawn('ffprobe', ['-v', 'error', '-analyzeduration', '3000000', '-show_entries', 'stream=index,codec_type', '-of', 'csv=p=0', url],
    { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<string[]>((resolve) => child.on('close', () => {
    clearTimeout(timer);
    // MPEG-TS lists each stream twice (in its program and alone): one entry per index
    const byIndex = new Map<number, string>();
    for (const row of out.split('\n').map((l) => l.trim().split(','))) if (row.length === 2) byIndex.set(Number(row[0]), row[1]!);
    resolve([...byIndex].sort((a, b) => a[0] - b[0]).map((r) => r[1]));
  }));
  t.teardown(() => { clearTimeout(timer); child.kill('SIGKILL'); return done; });
  return done;
}

/** ffprobe again and again until it reads streams (a stream not published yet is refused), within the deadline. */
export async function tracksOnceLive(t: TestLike, url: string, deadlineMs = 40_000): Promise<string[]> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const found = await tracks(t, url, Math.max(2000, end - Date.now()));
    if (found.length > 0 || Date.now() > end) return found;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A live H.264 + AAC test source (video first, as ffmpeg and OBS send it) for `-f flv` or `-f mpegts`. */
export const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-re', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
  '-map', '0:v', '-map', '1:a', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p',
  '-c:a', 'aac', '-b:a', '32k'];

export { waitFor };
