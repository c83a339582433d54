import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/**
 * What `hls-s3-vs-memfs.ts` reads: /proc figures of a process, the service's API, the HLS
 * processes it runs, their playlists, ffprobe.
 */

const TICK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const uptime = (): string => execFileSync('uptime', { encoding: 'utf8' }).trim();

/** utime + stime of the process itself (all its threads, children excluded), in seconds. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICK;
}

/** VmRSS in MiB. */
export function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** The pid of this process's child whose command line contains `needle` (the S3 test server). */
export function childPid(needle: string): number | undefined {
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    const kids = readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').trim().split(' ').filter(Boolean);
    for (const kid of kids) {
      const cmd = readFileSync(`/proc/${kid}/cmdline`, 'utf8');
      if (cmd.includes(needle)) return Number(kid);
    }
  }
  return undefined;
}

/** A JSON API call; throws on a status other than 200/201/204. */
export async function api<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const r = await fetch(base + path, {
    method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (![200, 201, 204].includes(r.status)) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return (r.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as T;
}

/** The HLS options of every process (the input only remuxed). */
const HLS = ['-c', 'copy', '-f', 'hls', '-hls_time', '2', '-hls_list_size', '6', '-hls_flags', 'delete_segments', '-method', 'PUT'];

/** Creates (and starts) process `id`: the looping source file remuxed to HLS at `output`. */
export async function createProcess(base: string, id: string, output: string): Promise<void> {
  await api(base, 'POST', '/api/v3/process', {
    id, reconnect: true, reconnect_delay_seconds: 2, stale_timeout_seconds: 30, autostart: true,
    options: ['-loglevel', 'info'], // info at least: the progress lines feed the stale watchdog
    input: [{ id: 'in', address: '{diskfs}/src.mp4', options: ['-re', '-stream_loop', '-1'] }],
    output: [{ id: 'out', address: output, options: HLS }],
  });
}

export interface ProcState { exec: string; runtime_seconds: number }

export const processState = (base: string, id: string) => api<ProcState>(base, 'GET', `/api/v3/process/${id}/state`);

/** A live playlist: the segments it lists, and how many it has named so far (its media sequence plus those; 0 without one). */
export async function playlist(url: string): Promise<{ named: number; listed: string[] }> {
  const r = await fetch(url);
  if (r.status !== 200) return { named: 0, listed: [] };
  const text = await r.text();
  const seq = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(text)?.[1] ?? 0);
  const listed = text.split('\n').filter((l) => l && !l.startsWith('#'));
  return { named: seq + listed.length, listed };
}

/** ffprobe on a URL: the video stream's codec and size, or the error. */
export function probe(url: string): Promise<{ ok: boolean; what: string }> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn('ffprobe', ['-v', 'error', '-rw_timeout', '10000000', '-select_streams', 'v:0',
      '-show_entries', 'stream=codec_name,width,height', '-of', 'csv=p=0', url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-500); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const what = out.trim().split('\n')[0] ?? '';
      resolve({ ok: code === 0 && /^h264,\d+,\d+/.test(what), what: what || err.trim() || `exit ${code}` });
    });
  });
}

/** The looping source: testsrc2 640x360 25 fps, H.264 at ~1 Mbit/s with a keyframe every 2 s, AAC audio; `seconds` long. */
export function makeSource(file: string, seconds: number): void {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=640x360:rate=25:duration=${seconds}`,
    '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
    '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '1000k', '-maxrate', '1000k', '-bufsize', '2000k',
    '-g', '50', '-keyint_min', '50', '-sc_threshold', '0', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k',
    '-shortest', '-movflags', '+faststart', file]);
  if (r.status !== 0) throw new Error(`source: ${r.stderr.toString()}`);
}

/** Times one PUT of `body` (ms); the status is checked. */
export async function timedPut(url: string, body: Uint8Array<ArrayBuffer>): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(url, { method: 'PUT', body });
  await r.arrayBuffer();
  if (r.status !== 201 && r.status !== 204) throw new Error(`PUT ${url}: ${r.status}`);
  return performance.now() - t0;
}

export const mean = (xs: number[]) => xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0;
export const median = (xs: number[]) => xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : 0;
