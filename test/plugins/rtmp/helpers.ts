import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { startApp, request, type TestApp, type TestLike } from '../../helpers/app.ts';
import { startCli, type CliApp } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';

export const FFMPEG = '/usr/bin/ffmpeg';

/** Starts the service with RTMP on 127.0.0.1 port 0, merged with `rtmp` and `extra`. */
export async function startRtmpApp(t: TestLike, rtmp: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<TestApp & { rtmp: RtmpService; base: string }> {
  const app = await startApp(t, { config: { ...extra, rtmp: { enable: true, address: '127.0.0.1:0', ...rtmp } } });
  const svc = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  return Object.assign(app, { rtmp: svc, base: `rtmp://127.0.0.1:${svc.ports().rtmp}` });
}

/**
 * The service as its own OS process (so a crash is an exit, and RSS is its own) with RTMP on
 * 127.0.0.1 port 0; the bound port is read from its `rtmp server listening` log line.
 */
export async function startRtmpCli(t: TestLike, rtmp: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<CliApp & { port: number; base: string; log(): Promise<string[]> }> {
  const app = await startCli(t, { ...extra, rtmp: { enable: true, address: '127.0.0.1:0', ...rtmp } });
  const log = async () => (await request(app.url, 'GET', '/api/v3/log')).body as string[];
  const line = await waitFor(async () => (await log()).find((l) => l.includes('rtmp server listening')), { what: 'the RTMP port in the log' });
  const port = Number(/"rtmp":(\d+)/.exec(line)![1]);
  return Object.assign(app, { port, base: `rtmp://127.0.0.1:${port}`, log });
}

/** Pids of the ffmpeg processes among the descendants of `root` (read from /proc). */
export function ffmpegsUnder(root: number): number[] {
  const parent = new Map<number, number>();
  const names = new Map<number, string>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      names.set(Number(d), stat.slice(stat.indexOf('(') + 1, close));
      parent.set(Number(d), Number(stat.slice(close + 2).split(' ')[1]));
    } catch { /* gone meanwhile */ }
  }
  const under = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  return [...names].filter(([pid, name]) => name === 'ffmpeg' && under(pid)).map(([pid]) => pid);
}

export interface Ff {
  child: ChildProcess;
  /** Resolves with the exit code once ffmpeg ends. */
  done: Promise<number | null>;
  stderr(): string;
}

/** Runs ffmpeg (killed at teardown and at the deadline). */
export function ffmpeg(t: TestLike, args: string[], timeoutMs = 60_000): Ff {
  const child = spawn(FFMPEG, ['-hide_banner', '-nostdin', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-20_000); });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => { clearTimeout(timer); resolve(code); }));
  t.teardown(async () => {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await done; }
  });
  return { child, done, stderr: () => err };
}

/** A live H.264/AAC test source at `size`, `seconds` long, published to `url`. */
/** `seconds` of source; killed at `seconds` + 30 s at the latest. */
export function publish(t: TestLike, url: string, opts: { size?: string; seconds?: number; extra?: string[] } = {}): Ff {
  return ffmpeg(t, [
    '-loglevel', 'warning', '-re',
    '-f', 'lavfi', '-i', `testsrc2=size=${opts.size ?? '160x120'}:rate=10`,
    '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-t', String(opts.seconds ?? 30),
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-b:a', '32k', ...(opts.extra ?? []), '-f', 'flv', url,
  ], Math.max(60_000, ((opts.seconds ?? 30) + 30) * 1000));
}

/**
 * Plays `url` and decodes it, printing one `showinfo` line per frame; `frames()` are the frame
 * sizes seen so far (e.g. `160x120`), counted as they come (the stderr tail is bounded).
 */
export function play(t: TestLike, url: string, opts: { frames?: number; extra?: string[]; timeoutMs?: number } = {}): Ff & { frames(): string[]; keyFirst(): boolean | undefined } {
  const f = ffmpeg(t, [
    '-loglevel', 'info', ...(opts.extra ?? []), '-i', url,
    ...(opts.frames ? ['-frames:v', String(opts.frames)] : []), '-vf', 'showinfo', '-an', '-f', 'null', '-',
  ], opts.timeoutMs);
  const sizes: string[] = [];
  let keyFirst: boolean | undefined;
  let partial = '';
  f.child.stderr!.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split(/[\r\n]/);
    partial = lines.pop()!;
    for (const l of lines) {
      const m = /Parsed_showinfo.*? n:\s*\d+.*? s:(\d+x\d+).*? iskey:(\d)/.exec(l);
      if (!m) continue;
      keyFirst ??= m[2] === '1';
      sizes.push(m[1]!);
    }
  });
  return Object.assign(f, { frames: () => [...sizes], keyFirst: () => keyFirst });
}
