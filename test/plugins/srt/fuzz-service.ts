import { spawn } from 'node:child_process';
import { request, type TestLike } from '../../helpers/app.ts';
import { startCli, type CliApp } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';
import { SrtConfig } from '../../../plugins/srt/schema.ts';
import { FFMPEG, PASS, TOKEN } from './srt-helpers.ts';

/*
 * The service as its own OS process with SRT on (so a crash is an exit), and an ffmpeg player
 * that counts the frames it decodes, for the SRT fuzz suite.
 */

/** Settings of the `srt` section that this version of the configuration knows (newer keys are optional). */
export function knownSrtSettings(wanted: Record<string, unknown>): Record<string, unknown> {
  const props = (SrtConfig as unknown as { properties: Record<string, unknown> }).properties;
  return Object.fromEntries(Object.entries(wanted).filter(([k]) => k in props));
}

export type SrtCli = CliApp & { srtPort: number; log(): Promise<string[]> };

/** Starts the CLI with SRT on 127.0.0.1 port 0 (token and passphrase of srt-helpers); the port from its log. */
export async function startSrtCli(t: TestLike, srt: Record<string, unknown> = {}): Promise<SrtCli> {
  const app = await startCli(t, { srt: { enable: true, address: '127.0.0.1:0', token: TOKEN, passphrase: PASS, ...srt } });
  const log = async () => (await request(app.url, 'GET', '/api/v3/log')).body as string[];
  const line = await waitFor(async () => (await log()).find((l) => l.includes('SRT server listening')), { what: 'the SRT port in the log' });
  return Object.assign(app, { srtPort: Number(/address="[^"]*:(\d+)"/.exec(line)![1]), log });
}

export interface Player {
  /** Frames decoded so far. */
  frames(): number;
  stderr(): string;
  exitCode(): number | null;
  done: Promise<void>;
}

/** ffmpeg decoding `url`, one `showinfo` line a frame; killed at teardown and at the deadline. */
export function player(t: TestLike, url: string, opts: { frames?: number; timeoutMs: number }): Player {
  const child = spawn(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'info', '-i', url,
    ...(opts.frames ? ['-frames:v', String(opts.frames)] : []), '-vf', 'showinfo', '-an', '-f', 'null', '-'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let frames = 0;
  let tail = '';
  let partial = '';
  child.stderr.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split(/[\r\n]/);
    partial = lines.pop()!;
    for (const l of lines) {
      if (/Parsed_showinfo.*? n:\s*\d+/.test(l)) frames++;
      else tail = `${tail}${l}\n`.slice(-3000);
    }
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
  const done = new Promise<void>((resolve) => child.on('close', () => { clearTimeout(timer); resolve(); }));
  t.teardown(async () => {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await done;
  });
  return { frames: () => frames, stderr: () => tail, exitCode: () => child.exitCode, done };
}
