import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Child, quantile, sleep, type Message } from './ipc.ts';
import { measure, servicePids, type ProcFigures } from './whep-proc.ts';

/**
 * Fan-out of the WHEP bench (`whep.ts`): N WHEP viewers (node-datachannel, `whep-viewer.ts`, up to
 * PER_PROCESS a process) connect to the service, five at a time; after a settle, one steady window
 * measures the CPU and RSS of the service, its WebRTC host process, the feed ffmpeg (and, for the
 * load of the box, the publisher's ffmpeg and the viewer processes) and what every viewer received.
 */
const VIEWER = fileURLToPath(new URL('./whep-viewer.ts', import.meta.url));
const PER_PROCESS = 25;
const SETTLE_MS = 3000;
/**
 * Attempts per viewer. A libdatachannel offerer can fail on loopback: the service's STUN checks and
 * DTLS ClientHello arrive while `setRemoteDescription(answer)` is still running, ICE connects on a
 * peer-reflexive candidate, DTLS checks the certificate before the answer's fingerprint is stored
 * ("certificate verify failed"), the peer fails, and the call throws "Got a remote candidate without
 * ICE transport". A viewer-side race (Chromium does not have it): counted, and the viewer tries again.
 */
const ATTEMPTS = 3;

/** The service under measure and its source. */
export interface Target { base: string; stream: string; token: string; servicePid: number; publisher: Child; publisherFfmpeg: number }

export interface ConnectTiming { offerMs: number; answerMs: number; connectedMs: number; firstRtpMs: number }

interface PeerStat { id: number; state: string; videoPackets: number; videoBytes: number; videoLost: number; audioPackets: number; audioBytes: number; audioLost: number }

export interface FanRow {
  /** Viewers up, failed connect attempts (each tried again) and their reasons. */
  round: number; viewers: number; connected: number; failed: number; failures: string[]; windowS: number;
  /** service, host, feed, publisher (its ffmpeg), viewers (all viewer processes together). */
  procs: Record<string, ProcFigures>;
  /** Video and audio RTP per viewer over the window (Mbit/s, kbit/s): min, median, max. */
  videoMbit: [number, number, number]; audioKbit: [number, number, number];
  /** Viewers whose video reached 99 % of the best one's, with no sequence number missing. */
  viewersFull: number; videoLost: number; audioLost: number;
  /** The publisher's FLV out (video, audio and FLV framing) over the window, Mbit/s. */
  publisherMbit: number;
  /** Sessions the service listed (GET /api/v3/webrtc) connected during the window; left 10 s after the DELETEs. */
  sessionsConnected: number; sessionsLeft: number; deleteStatuses: Record<string, number>;
  load1: number; timings: ConnectTiming[];
}

/** The viewer processes of one configuration and the viewers they hold. */
export class Viewers {
  readonly procs: Child[] = [];
  readonly #where = new Map<number, Child>();
  #next = 1;

  static async start(n: number): Promise<Viewers> {
    const v = new Viewers();
    for (let i = 0; i < Math.max(1, Math.ceil(n / PER_PROCESS)); i++) {
      const c = new Child(VIEWER, []);
      v.procs.push(c);
      await c.next((m) => m.ready === true, 30_000, 'viewer process ready');
    }
    return v;
  }

  get ids(): number[] { return [...this.#where.keys()]; }

  async #one(t: Target, proc: Child): Promise<ConnectTiming> {
    const id = this.#next++;
    this.#where.set(id, proc);
    const done = proc.next((m) => m.up === id || m.failed === id, 40_000, `viewer ${id}`);
    proc.send({ connect: id, url: `${t.base}/webrtc/${t.stream}/whep`, token: t.token });
    const m: Message = await done;
    if (m.failed === id) { this.#where.delete(id); throw new Error(String(m.message)); }
    return { offerMs: Number(m.offerMs), answerMs: Number(m.answerMs), connectedMs: Number(m.connectedMs), firstRtpMs: Number(m.firstRtpMs) };
  }

  /** One viewer, tried up to ATTEMPTS times; the failed attempts' reasons go to `failures`. */
  async #tried(t: Target, proc: Child, failures: string[]): Promise<ConnectTiming | undefined> {
    for (let a = 1; a <= ATTEMPTS; a++) {
      try {
        return await this.#one(t, proc);
      } catch (e) {
        failures.push((e as Error).message);
      }
    }
    return undefined;
  }

  /** N viewers, five at a time (a failed connect tried again): their times, and why the attempts that failed did. */
  async connect(t: Target, n: number): Promise<{ timings: ConnectTiming[]; failures: string[] }> {
    const timings: ConnectTiming[] = [];
    const failures: string[] = [];
    for (let i = 0; i < n; i += 5) {
      const batch = Array.from({ length: Math.min(5, n - i) }, (_, k) => this.#tried(t, this.procs[(i + k) % this.procs.length]!, failures)
        .then((x) => { if (x) timings.push(x); }));
      await Promise.all(batch);
    }
    return { timings, failures };
  }

  async stats(): Promise<Map<number, PeerStat>> {
    const all = await Promise.all(this.procs.map(async (c) => {
      const p = c.next((m) => m.stats === true, 10_000, 'viewer stats');
      c.send({ stats: true });
      return (await p).peers as PeerStat[];
    }));
    return new Map(all.flat().map((s) => [s.id, s]));
  }

  /** DELETE of every session (by its viewer): the count of each status. */
  async close(): Promise<Record<string, number>> {
    const statuses: Record<string, number> = {};
    await Promise.all([...this.#where].map(async ([id, c]) => {
      const p = c.next((m) => m.closed === id, 15_000, `close ${id}`);
      c.send({ close: id });
      const s = String((await p).status);
      statuses[s] = (statuses[s] ?? 0) + 1;
    }));
    this.#where.clear();
    return statuses;
  }

  async stop(): Promise<void> {
    await Promise.all(this.procs.map((c) => c.stop()));
  }
}

async function sessions(base: string): Promise<{ connected: number; all: number }> {
  const r = await fetch(`${base}/api/v3/webrtc`);
  const list = (await r.json()) as { kind: string; connected: boolean }[];
  const whep = list.filter((s) => s.kind === 'whep');
  return { connected: whep.filter((s) => s.connected).length, all: whep.length };
}

async function publisherBytes(t: Target): Promise<number> {
  const p = t.publisher.next((m) => m.stats === true, 5000, 'publisher stats');
  t.publisher.send({ stats: true });
  return Number((await p).flvBytes);
}

const triple = (xs: number[]): [number, number, number] => (xs.length ? [Math.min(...xs), quantile(xs, 0.5), Math.max(...xs)] : [NaN, NaN, NaN]);

/** What each viewer got between two readings. */
function received(v0: Map<number, PeerStat>, v1: Map<number, PeerStat>, secs: number) {
  const per = [...v1.values()].filter((p) => v0.has(p.id)).map((p) => {
    const b = v0.get(p.id)!;
    return {
      video: ((p.videoBytes - b.videoBytes) * 8) / secs / 1e6, audio: ((p.audioBytes - b.audioBytes) * 8) / secs / 1e3,
      videoLost: p.videoLost - b.videoLost, audioLost: p.audioLost - b.audioLost,
    };
  });
  const best = Math.max(0, ...per.map((p) => p.video));
  return {
    videoMbit: triple(per.map((p) => p.video)), audioKbit: triple(per.map((p) => p.audio)),
    viewersFull: per.filter((p) => p.video >= 0.99 * best && p.videoLost === 0).length,
    videoLost: per.reduce((a, p) => a + p.videoLost, 0), audioLost: per.reduce((a, p) => a + p.audioLost, 0),
  };
}

/** One configuration: N viewers connected, a settle, one window, then every session DELETEd. */
export async function fanOut(t: Target, n: number, round: number, windowS: number): Promise<FanRow> {
  const viewers = await Viewers.start(n);
  try {
    const { timings, failures } = await viewers.connect(t, n);
    await sleep(SETTLE_MS);
    const { host, feed } = servicePids(t.servicePid);
    if (!host || !feed) throw new Error(`no ${host ? 'feed ffmpeg' : 'WebRTC host'} under the service`);
    const pids: Record<string, number> = { service: t.servicePid, host, feed, publisher: t.publisherFfmpeg };
    viewers.procs.forEach((c, i) => { pids[`viewer${i}`] = c.pid; });
    const [v0, b0] = [await viewers.stats(), await publisherBytes(t)];
    const w0 = performance.now();
    const m = await measure(pids, windowS);
    const listed = await sessions(t.base);
    const [v1, b1] = [await viewers.stats(), await publisherBytes(t)];
    const secs = (performance.now() - w0) / 1000;
    const procs: Record<string, ProcFigures> = {};
    for (const [k, f] of Object.entries(m.figures)) if (!k.startsWith('viewer')) procs[k] = f;
    const vs = Object.entries(m.figures).filter(([k]) => k.startsWith('viewer')).map(([, f]) => f);
    procs.viewers = {
      pid: 0, cpuPercent: vs.reduce((a, f) => a + f.cpuPercent, 0),
      rssMeanMb: vs.reduce((a, f) => a + f.rssMeanMb, 0), rssMaxMb: vs.reduce((a, f) => a + f.rssMaxMb, 0),
    };
    const deleteStatuses = await viewers.close();
    let left = await sessions(t.base);
    for (let i = 0; i < 20 && left.all > 0; i++) { await sleep(500); left = await sessions(t.base); }
    return {
      round, viewers: n, connected: timings.length, failed: failures.length, failures, windowS: m.wall, procs,
      ...received(v0, v1, secs), publisherMbit: ((b1 - b0) * 8) / secs / 1e6,
      sessionsConnected: listed.connected, sessionsLeft: left.all, deleteStatuses, load1: loadavg()[0]!, timings,
    };
  } finally {
    await viewers.stop();
  }
}
