import { spawn, type ChildProcess } from 'node:child_process';
import type { TestApp, TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

export const FFMPEG = 'ffmpeg';

/** A live HLS stream in memfs, written by a process of the service itself (`{memfs}/<name>.m3u8`). */
export async function liveHls(app: TestApp, id: string, opts: { fmp4?: boolean } = {}): Promise<void> {
  const hls = ['-f', 'hls', '-hls_time', '1', '-hls_list_size', '4', '-hls_flags', 'delete_segments', '-method', 'PUT'];
  if (opts.fmp4) hls.push('-hls_segment_type', 'fmp4');
  const body = {
    id, reference: id, autostart: true,
    input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{
      id: 'out', address: `{memfs}/${id}.m3u8`,
      options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p', ...hls],
    }],
  };
  const r = await app.request('POST', '/api/v3/process', { body });
  if (r.status !== 200) throw new Error(`process not added: ${r.status} ${r.text}`);
  await waitFor(async () => {
    const res = await fetch(`${app.url}/api/v3/fs/mem/${id}.m3u8`);
    const text = await res.text();
    return res.status === 200 && (text.match(/#EXTINF/g)?.length ?? 0) >= 2;
  }, { timeout: 30_000, what: `${id}.m3u8 with two segments` });
}

export interface Player {
  child: ChildProcess;
  stderr(): string;
  /** Frames decoded so far (from `-progress`): proof that it plays. */
  frames(): number;
  /** Resolves with the exit code once it ends. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** A real HLS player: `ffmpeg -i <url> -f null -`, stopped at teardown. */
export function player(t: TestLike, url: string): Player {
  const child = spawn(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'warning', '-progress', 'pipe:1', '-i', url, '-f', 'null', '-'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let frames = 0;
  child.stdout!.on('data', (d: Buffer) => {
    for (const m of d.toString().matchAll(/^frame=(\d+)/gm)) frames = Number(m[1]);
  });
  child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-4000); });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  t.teardown(stop);
  return { child, stderr: () => err, frames: () => frames, exited, stop };
}

/** `GET /api/v3/session/active?collectors=<name>` */
export async function active(app: TestApp, collector = 'hls'): Promise<any[]> {
  return (await app.request('GET', `/api/v3/session/active?collectors=${collector}`)).body[collector];
}

/** `GET /api/v3/session?collectors=<name>` */
export async function summary(app: TestApp, collector = 'hls'): Promise<any> {
  return (await app.request('GET', `/api/v3/session?collectors=${collector}`)).body[collector];
}
