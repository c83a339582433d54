import type { ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import type { ChildrenService, IngestPeer, StreamReader, StreamTable } from '../../sdk/index.ts';
import type { HostLink } from './host-link.ts';

/** A feed with no viewer left stays this long, so a viewer that reconnects starts at once. */
const LINGER_MS = 10_000;
/** How long a viewer of a name nothing publishes waits for an on-demand process to publish it. */
const DEMAND_MS = 10_000;
/** Bytes of TS queued for a feed's ffmpeg before the feed is too slow and ends. */
const MAX_QUEUED = 8 << 20;
/** Payload types of the feed's RTP (each viewer gets its own, rewritten in the host). */
export const VIDEO_PT = 96;
export const AUDIO_PT = 111;

interface Feed {
  name: string;
  refs: number;
  ready: Promise<boolean>;
  child?: ChildProcess;
  reader?: StreamReader;
  linger?: NodeJS.Timeout;
  ended: boolean;
}

export interface FeedOptions {
  streams: StreamTable;
  children: ChildrenService;
  ffmpeg: string;
  link: HostLink;
  log: Logger;
  audioKbit: number;
  /** A feed ended (its stream ended, or its ffmpeg failed): its viewers' sessions end. */
  ended(name: string): void;
}

/** The ffmpeg of a feed: the stream's MPEG-TS in, H.264 RTP passed through and Opus RTP out to the host's ports. */
export function feedArgs(ports: { video: number; audio: number }, ssrc: { video: number; audio: number }, audio: boolean, audioKbit: number): string[] {
  const rtp = (port: number) => `rtp://127.0.0.1:${port}?rtcpport=${port}&pkt_size=1200`;
  return [
    '-hide_banner', '-loglevel', 'error', '-nostats', '-fflags', 'nobuffer', '-flags', 'low_delay',
    '-probesize', '500000', '-analyzeduration', '500000', '-f', 'mpegts', '-i', 'pipe:0',
    '-map', '0:v:0', '-c:v', 'copy', '-bsf:v', 'dump_extra=freq=keyframe',
    '-f', 'rtp', '-payload_type', String(VIDEO_PT), '-ssrc', String(ssrc.video), rtp(ports.video),
    ...(audio ? ['-map', '0:a:0', '-c:a', 'libopus', '-ar', '48000', '-ac', '2', '-b:a', `${audioKbit}k`, '-application', 'lowdelay',
      '-f', 'rtp', '-payload_type', String(AUDIO_PT), '-ssrc', String(ssrc.audio), rtp(ports.audio)] : []),
  ];
}

/**
 * The WebRTC form of the streams that have viewers: per stream one reader of the stream table
 * (MPEG-TS) piped into one supervised ffmpeg, which passes H.264 through and makes Opus of the
 * audio (AAC or MP3), as RTP to the host process, which sends it to every viewer of the stream.
 * Started by the first viewer; ended `LINGER_MS` after the last, or when the stream ends.
 */
export class Feeds {
  readonly #o: FeedOptions;
  readonly #feeds = new Map<string, Feed>();
  #n = 0;

  constructor(o: FeedOptions) {
    this.#o = o;
  }

  has(name: string): boolean {
    return this.#feeds.has(name);
  }

  /** Feeds open, opening or lingering (each holds sockets in the host). */
  get size(): number {
    return this.#feeds.size;
  }

  /**
   * A viewer's hold on the feed of `name`: false when nothing publishes it (or will, on demand:
   * `from`, the first viewer's address, is what an on-demand start counts against).
   */
  async acquire(name: string, from?: string): Promise<boolean> {
    let f = this.#feeds.get(name);
    if (f) {
      f.refs++;
      clearTimeout(f.linger);
      const ok = await f.ready;
      if (!ok) this.release(name);
      return ok;
    }
    f = { name, refs: 1, ended: false, ready: Promise.resolve(false) };
    this.#feeds.set(name, f);
    f.ready = this.#open(f, from);
    const ok = await f.ready;
    if (!ok) this.#end(f, false);
    return ok;
  }

  async #open(f: Feed, from: string | undefined): Promise<boolean> {
    const { streams, link } = this.#o;
    if (!streams.get(f.name) && !(await streams.whenPublished(f.name, DEMAND_MS, from))) return false;
    if (f.ended) return false;
    const ssrc = { video: randomInt(1, 0x7fffffff), audio: randomInt(1, 0x7fffffff) };
    let fed;
    try {
      fed = await link.ask({ t: 'feed', name: f.name, videoSsrc: ssrc.video, audioSsrc: ssrc.audio });
    } catch {
      return false;
    }
    if (fed.t !== 'fed' || f.ended) return false;
    const info = streams.get(f.name);
    // what the table has seen of the stream (an MPEG-TS stream's PMT, an FLV stream's two headers)
    // says whether it has sound; else an FLV stream's codec ids, and an MPEG-TS one is tried with,
    // then again without
    const audio = info?.media.known ? info.media.audio : !(info?.format === 'flv' && info.audioCodec === 0 && info.videoCodec !== 0);
    return this.#run(f, { video: fed.video, audio: fed.audio }, ssrc, audio);
  }

  /** Starts the feed's ffmpeg and its table reader; false when the stream is gone. */
  #run(f: Feed, ports: { video: number; audio: number }, ssrc: { video: number; audio: number }, audio: boolean): boolean {
    const o = this.#o;
    const child = o.children.spawn(o.ffmpeg, feedArgs(ports, ssrc, audio, o.audioKbit), { stdio: ['pipe', 'ignore', 'pipe'] });
    f.child = child;
    o.log.debug({ stream: f.name, audio }, 'a WebRTC feed ffmpeg started');
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-1000); });
    child.stdin?.on('error', () => { /* ffmpeg ended: its exit says why */ });
    child.on('error', () => { /* spawn failure: exit follows */ });
    // 'close', not 'exit': its stderr is read to the end by then
    child.on('close', (code, signal) => {
      if (f.child !== child || f.ended) return;
      f.reader?.leave();
      f.reader = undefined;
      if (audio && /does not contain any stream|matches no streams/.test(stderr)) { this.#run(f, ports, ssrc, false); return; }
      o.log.warn({ stream: f.name, code, signal, stderr: stderr.trim().split('\n').slice(-3).join(' | ') }, 'a WebRTC feed ffmpeg ended');
      this.#end(f, true);
    });
    const peer: IngestPeer = { id: `webrtc-feed-${++this.#n}`, protocol: 'webrtc', stream: f.name, remote: '127.0.0.1:0', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }) };
    const r = o.streams.read(f.name, 'mpegts', peer, {
      send: (batch) => {
        const stdin = child.stdin;
        if (!stdin || stdin.destroyed) return false;
        for (const b of batch) stdin.write(b);
        return stdin.writableLength < MAX_QUEUED;
      },
      stop: () => { f.reader = undefined; this.#end(f, true); },
    }, { internal: true }); // one feed for every viewer: each viewer is admitted on its own (service.ts)
    if (!r.ok) { child.kill('SIGKILL'); return false; }
    f.reader = r.handle;
    return true;
  }

  /** A viewer let go; the feed ends `LINGER_MS` after its last. */
  release(name: string): void {
    const f = this.#feeds.get(name);
    if (!f || f.refs === 0) return;
    f.refs--;
    if (f.refs > 0) return;
    clearTimeout(f.linger);
    f.linger = setTimeout(() => this.#end(f, false), LINGER_MS);
  }

  #end(f: Feed, notify: boolean): void {
    if (f.ended) return;
    f.ended = true;
    clearTimeout(f.linger);
    if (this.#feeds.get(f.name) === f) this.#feeds.delete(f.name);
    f.reader?.leave();
    f.reader = undefined;
    if (f.child && f.child.exitCode === null && f.child.signalCode === null) f.child.kill('SIGKILL');
    this.#o.link.send({ t: 'unfeed', name: f.name });
    if (notify) this.#o.ended(f.name);
  }

  /** The host ended: its feed sockets are gone; the feeds end (their viewers' sessions ended with the host). */
  lost(): void {
    for (const f of [...this.#feeds.values()]) this.#end(f, false);
  }

  close(): void {
    this.lost();
  }
}
