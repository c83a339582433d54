import { spawn, type ChildProcess } from 'node:child_process';
import { startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';

export const FFMPEG = '/usr/bin/ffmpeg';

/** Starts the service with RTMP on 127.0.0.1 port 0, merged with `rtmp` and `extra`. */
export async function startRtmpApp(t: TestLike, rtmp: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<TestApp & { rtmp: RtmpService; base: string }> {
  const app = await startApp(t, { config: { ...extra, rtmp: { enable: true, address: '127.0.0.1:0', ...rtmp } } });
  const svc = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  return Object.assign(app, { rtmp: svc, base: `rtmp://127.0.0.1:${svc.ports().rtmp}` });
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
export function publish(t: TestLike, url: string, opts: { size?: string; seconds?: number; extra?: string[] } = {}): Ff {
  return ffmpeg(t, [
    '-loglevel', 'warning', '-re',
    '-f', 'lavfi', '-i', `testsrc2=size=${opts.size ?? '160x120'}:rate=10`,
    '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-t', String(opts.seconds ?? 30),
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-b:a', '32k', ...(opts.extra ?? []), '-f', 'flv', url,
  ]);
}

/**
 * Plays `url` and decodes it, printing one `showinfo` line per frame; `frames()` are the frame
 * sizes seen so far (e.g. `160x120`), counted as they come (the stderr tail is bounded).
 */
export function play(t: TestLike, url: string, opts: { frames?: number; extra?: string[] } = {}): Ff & { frames(): string[]; keyFirst(): boolean | undefined } {
  const f = ffmpeg(t, [
    '-loglevel', 'info', ...(opts.extra ?? []), '-i', url,
    ...(opts.frames ? ['-frames:v', String(opts.frames)] : []), '-vf', 'showinfo', '-an', '-f', 'null', '-',
  ]);
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
