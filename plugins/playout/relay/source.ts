// One run of the source reader: an ffmpeg copying the first video and audio stream of the source URL
// into MPEG-TS on its stdout. It only remuxes (-c copy), so it costs little; its stderr tells the stream
// parameters. The relay starts a new run whenever one ends or stalls.
import type { ChildProcess } from 'node:child_process';
import type { Ffmpeg } from './ffmpeg.ts';
import type { Logger } from 'pino';
import { TsInput } from './ts-input.ts';
import { splitPackets } from './ts-packet.ts';
import { StreamParamsReader, type StreamParams } from './stream-params.ts';

export interface SourceRunOptions {
  ffmpeg: Ffmpeg;
  url: string;
  inputOptions: readonly string[];
  /** The whole argument list instead of `sourceArgs(url, inputOptions)` (a playlist item's run). */
  args?: readonly string[];
  log: Logger;
  onParams: (run: SourceRun, params: StreamParams) => void;
  onPackets: (run: SourceRun, packets: Buffer[]) => void;
  onExit: (run: SourceRun) => void;
}

/** The source ffmpeg's arguments: the user's input options apply to the source URL. */
export function sourceArgs(url: string, inputOptions: readonly string[]): string[] {
  // RTMP sends the codec configuration up front, yet ffmpeg probes flv for 5 s (frame rate
  // estimation): 1 s is enough and brings a returning source back 4 s sooner. The user's own
  // probing options win.
  const own = inputOptions.some((o) => o === '-analyzeduration' || o === '-probesize');
  const probe = /^rtmp[st]?:/i.test(url) && !own ? ['-analyzeduration', '1000000'] : [];
  return [
    '-hide_banner', '-nostdin', '-nostats', '-loglevel', 'info', ...probe, ...inputOptions, '-i', url,
    '-map', '0:v:0?', '-map', '0:a:0?', '-c', 'copy',
    // flush every packet: a pipe buffers 32 KiB otherwise, seconds of a low bitrate source
    '-flush_packets', '1', '-f', 'mpegts', 'pipe:1',
  ];
}

export class SourceRun {
  readonly url: string;
  readonly input = new TsInput();
  params: StreamParams | undefined;
  /** Wall clock of the last byte read (0: none yet), of the start, and bytes read. */
  lastDataAt = 0;
  /** Wall clock of the first byte read (0: none yet). */
  firstDataAt = 0;
  readonly startedAt = Date.now();
  bytes = 0;
  exited = false;
  /** The last stderr lines, for the swap status's error. */
  lastLines: string[] = [];
  #opts: SourceRunOptions;
  #child: ChildProcess;
  #rest: Buffer = Buffer.alloc(0);
  #exit: Promise<void>;

  constructor(opts: SourceRunOptions) {
    this.#opts = opts;
    this.url = opts.url;
    const reader = new StreamParamsReader();
    const child = opts.ffmpeg.spawn(opts.ffmpeg.binary, [...(opts.args ?? sourceArgs(opts.url, opts.inputOptions))], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    this.#exit = new Promise((resolve) => child.once('close', () => resolve()));
    child.on('error', (err) => { this.lastLines.push(err.message); });
    let partial = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      const lines = (partial + text).split(/\r?\n|\r/);
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line) continue;
        this.lastLines.push(line);
        if (this.lastLines.length > 8) this.lastLines.shift();
        const p = reader.push(line);
        if (p) { this.params = p; opts.onParams(this, p); }
      }
    });
    child.stdout!.on('data', (chunk: Buffer) => this.#data(chunk));
    child.once('close', (code, signal) => {
      this.exited = true;
      opts.log.debug({ url: opts.url, code, signal }, 'playout source ended');
      opts.onExit(this);
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  #data(chunk: Buffer): void {
    this.lastDataAt = Date.now();
    if (this.firstDataAt === 0) this.firstDataAt = this.lastDataAt;
    this.bytes += chunk.length;
    const buf = this.#rest.length > 0 ? Buffer.concat([this.#rest, chunk]) : chunk;
    const packets: Buffer[] = [];
    const rest = splitPackets(buf, packets);
    this.#rest = rest.length > 0 ? Buffer.from(rest) : Buffer.alloc(0);
    if (packets.length > 0) this.#opts.onPackets(this, packets);
  }

  /** Ends the run (a remuxer has nothing to save) and resolves once the process is gone. */
  kill(): Promise<void> {
    if (!this.exited) this.#child.kill('SIGKILL');
    return this.#exit;
  }
}
