import { readdirSync, readFileSync } from 'node:fs';
import type { Requester } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/** A light endless video source: real time, tiny, so many of them fit on a busy 2-core machine. */
export const VIDEO_IN = { id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] };
export const NULL_OUT = { id: 'out', address: '-', options: ['-f', 'null'] };

/** A minimal valid body: lavfi video to the null muxer, not started. */
export function nullProcess(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, input: [VIDEO_IN], output: [NULL_OUT], autostart: false, ...extra };
}

export async function addProcess(app: Requester, body: Record<string, unknown>): Promise<any> {
  const r = await app.request('POST', '/api/v3/process', { body });
  if (r.status !== 200) throw new Error(`POST /api/v3/process: ${r.status} ${r.text}`);
  return r.body;
}

export async function command(app: Requester, id: string, cmd: string): Promise<number> {
  return (await app.request('PUT', `/api/v3/process/${encodeURIComponent(id)}/command`, { body: { command: cmd } })).status;
}

export async function state(app: Requester, id: string): Promise<any> {
  const r = await app.request('GET', `/api/v3/process/${encodeURIComponent(id)}/state`);
  if (r.status !== 200) throw new Error(`state of ${id}: ${r.status} ${r.text}`);
  return r.body;
}

/** Waits until the state satisfies `pred`; returns that state. */
export async function waitState(app: Requester, id: string, pred: (s: any) => boolean, what: string, timeout = 20_000): Promise<any> {
  return waitFor(async () => {
    const s = await state(app, id);
    return pred(s) ? s : undefined;
  }, { timeout, what: `${id}: ${what}` });
}

/** The parent of `pid` (from /proc/<pid>/stat), 0 when it is gone. */
function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

/**
 * Whether `pid` descends from this test's process: the service under test runs in it (or is its
 * child), so the ffmpegs of other test files running beside it (same stream names) never count.
 */
function ours(pid: number): boolean {
  for (let p = parentOf(pid), hops = 0; p > 1 && hops < 64; p = parentOf(p), hops++) {
    if (p === process.pid) return true;
  }
  return false;
}

/**
 * Pids of running ffmpeg children of this test whose command line contains `marker`; with
 * `anywhere`, every ffmpeg of the machine (orphans a killed service left behind: its marker must
 * be unique to the test).
 */
export function ffmpegPids(marker: string, opts: { anywhere?: boolean } = {}): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmd.startsWith('ffmpeg') || cmd.includes('/ffmpeg\0')) {
        if (cmd.includes(marker) && (opts.anywhere || ours(Number(name)))) out.push(Number(name));
      }
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * A process writing HLS (0.5 s segments, every one listed, none deleted by ffmpeg) through the
 * placeholder `ph` (`{memfs}`, `{fs:cloud}`), with cleanup rules on the filesystem `fs` (an alias
 * works): at most 3 segments, playlist and segments purged on delete.
 */
export function hlsWithCleanup(id: string, ph: string, fs: string, segmentFs = fs): Record<string, unknown> {
  return {
    id,
    input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{
      id: 'hls',
      address: `${ph}/{processid}.m3u8`,
      options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '5', '-f', 'hls', '-hls_time', '0.5', '-hls_list_size', '0',
        '-hls_segment_filename', `${ph}/{processid}_%d.ts`, '-method', 'PUT'],
      cleanup: [
        { pattern: `${segmentFs}:/{processid}_*.ts`, max_files: 3, purge_on_delete: true },
        { pattern: `${fs}:/{processid}.m3u8`, purge_on_delete: true },
      ],
    }],
  };
}
