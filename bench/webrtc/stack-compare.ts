import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Child, cpuSeconds, loopbackOnly, rssMb, serverDtlsClient, sleep, threads, type Message } from './ipc.ts';
import { writeReport, type ConfigRow, type ConnectTiming } from './stack-report.ts';
import { AUDIO_PT, AUDIO_SSRC, VIDEO_PT, VIDEO_SSRC } from './stacks.ts';

/**
 * WebRTC stack comparison (issue 33, point 2): each stack under test sends one H.264 track
 * (2.5 Mbit/s, 25 fps, passed through from ffmpeg's RTP, no re-encode) and one Opus track to N
 * viewers in other processes, over loopback (127.0.0.1 host candidates only, no STUN, non-trickle
 * SDP relayed through this process). Stacks and viewer counts alternate round by round.
 *
 *   WEBRTC_EVAL_MODULES=<scratch folder>/node_modules node bench/webrtc/stack-compare.ts \
 *     [seconds per window, default 20] [rounds, default 2] [viewers, default 1,10,50] [stacks, default werift,ndc,wrtc:10]
 *
 * Writes bench/results/webrtc-stacks-<date>.{json,md}.
 */
const SECONDS = Number(process.argv[2] ?? 20);
const ROUNDS = Number(process.argv[3] ?? 2);
const COUNTS = (process.argv[4] ?? '1,10,50').split(',').map(Number);
/** `name` or `name:max viewers` (wrtc encodes per viewer: 50 of them would only overload the box). */
const STACKS = (process.argv[5] ?? 'werift,ndc,wrtc:10').split(',').map((s) => s.split(':'));
const MAX = new Map(STACKS.map(([name, max]) => [name, Number(max ?? Infinity)]));
const NAMES = STACKS.map(([name]) => name);
const START_CONNECTS = Number(process.env.WEBRTC_START_CONNECTS ?? 10);
const PER_VIEWER_PROCESS = 25;
const HERE = fileURLToPath(new URL('.', import.meta.url));

/** A 30 s clip: H.264 baseline 2.5 Mbit/s CBR 1280x720 25 fps (keyframe every 2 s) and Opus 64 kbit/s. */
function clip(): string {
  const file = join(tmpdir(), 'webrtc-stack-compare-clip.mp4');
  if (existsSync(file)) return file;
  const enc = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
    '-t', '30', '-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'baseline', '-level', '3.1', '-bf', '0', '-g', '50',
    '-b:v', '2500k', '-minrate', '2500k', '-maxrate', '2500k', '-bufsize', '1250k', '-x264-params', 'nal-hrd=cbr',
    '-pix_fmt', 'yuv420p', '-c:a', 'libopus', '-b:a', '64k', '-ac', '2', file]);
  if (enc.status !== 0) throw new Error(`clip encode failed: ${enc.stderr}`);
  return file;
}

/** ffmpeg loops the clip in real time and writes RTP (copy: no re-encode) to the server's ports. */
const sources = new Set<ChildProcess>();
process.on('exit', () => { for (const s of sources) s.kill('SIGKILL'); }); // also when the bench fails

function source(file: string, videoPort: number, audioPort: number): ChildProcess {
  const ffmpeg = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', file,
    '-map', '0:v', '-c', 'copy', '-f', 'rtp', '-payload_type', String(VIDEO_PT), '-ssrc', String(VIDEO_SSRC),
    `rtp://127.0.0.1:${videoPort}?pkt_size=1200`,
    '-map', '0:a', '-c', 'copy', '-f', 'rtp', '-payload_type', String(AUDIO_PT), '-ssrc', String(AUDIO_SSRC),
    `rtp://127.0.0.1:${audioPort}?pkt_size=1200`], { stdio: ['ignore', 'ignore', 'inherit'] });
  sources.add(ffmpeg);
  ffmpeg.once('exit', () => sources.delete(ffmpeg));
  return ffmpeg;
}

interface Rig { server: Child; viewers: Child[]; ffmpeg: ChildProcess; nextId: number }

/** One viewer: offer from the server, answer from a viewer process, first video RTP at the viewer. */
async function connect(rig: Rig, viewer: Child): Promise<ConnectTiming & { id: number }> {
  const id = rig.nextId++;
  const t0 = performance.timeOrigin + performance.now();
  const stamp = (): number => performance.timeOrigin + performance.now() - t0;
  const offered = rig.server.next((m) => m.offer === id, 15_000, `offer ${id}`);
  rig.server.send({ create: id });
  const offer = await offered;
  const offerMs = stamp();
  const answered = viewer.next((m) => m.answer === id, 15_000, `answer ${id}`);
  const connected = viewer.next((m) => m.connected === id, 20_000, `connected ${id}`);
  const first = viewer.next((m) => m.first === id, 20_000, `first RTP ${id}`);
  for (const p of [connected, first]) p.catch(() => undefined); // awaited below; an earlier failure must not leave them unhandled
  viewer.send({ offer: id, sdp: serverDtlsClient(loopbackOnly(String(offer.sdp))) });
  const answer = await answered;
  const answerMs = stamp();
  const accepted = rig.server.next((m) => m.accepted === id, 15_000, `accepted ${id}`);
  rig.server.send({ answer: id, sdp: loopbackOnly(String(answer.sdp)) });
  await accepted;
  const [c, f] = await Promise.all([connected, first]);
  return { id, offerMs, answerMs, connectedMs: Number(c.t) - t0, firstRtpMs: Number(f.t) - t0 };
}

async function startRig(stack: string, viewers: number, file: string): Promise<Rig> {
  const server = new Child(join(HERE, 'server.ts'), [stack]);
  const ready = await server.next((m) => m.ready === true, 30_000, `${stack} server ready`);
  const procs: Child[] = [];
  for (let i = 0; i < Math.max(1, Math.ceil(viewers / PER_VIEWER_PROCESS)); i++) {
    const v = new Child(join(HERE, 'viewer.ts'), []);
    await v.next((m) => m.ready === true, 30_000, 'viewer ready');
    procs.push(v);
  }
  const ffmpeg = source(file, Number(ready.videoPort), Number(ready.audioPort));
  for (let i = 0; i < 50; i++) {
    server.send({ stats: true });
    const s = await server.next((m) => m.stats === true, 5000, 'server stats');
    if (Number(s.video) > 0 && Number(s.audio) > 0) break;
    await sleep(200);
  }
  return { server, viewers: procs, ffmpeg, nextId: 1 };
}

async function stopRig(rig: Rig): Promise<void> {
  rig.ffmpeg.kill('SIGKILL');
  await Promise.all([rig.server.stop(), ...rig.viewers.map((v) => v.stop())]);
}

interface PeerCount { id: number; videoPackets: number; videoBytes: number; audioPackets: number }

async function viewerCounts(rig: Rig): Promise<PeerCount[]> {
  const all = await Promise.all(rig.viewers.map(async (v) => {
    const p = v.next((m) => m.stats === true, 10_000, 'viewer stats');
    v.send({ stats: true });
    return (await p).peers as PeerCount[];
  }));
  return all.flat();
}

async function serverIn(rig: Rig): Promise<{ video: number; audio: number; videoGaps: number }> {
  const p = rig.server.next((m) => m.stats === true, 10_000, 'server stats');
  rig.server.send({ stats: true });
  const m: Message = await p;
  return { video: Number(m.video), audio: Number(m.audio), videoGaps: Number(m.videoGaps) };
}

/** Sequential connects, each closed after its first RTP packet: the start time (a failure counted). */
async function startTimes(rig: Rig, count: number): Promise<{ timings: ConnectTiming[]; failed: number }> {
  const timings: ConnectTiming[] = [];
  let failed = 0;
  for (let i = 0; i < count; i++) {
    const id = rig.nextId;
    try { timings.push(await connect(rig, rig.viewers[0])); } catch (e) { failed++; console.error(`start connect: ${(e as Error).message}`); }
    rig.viewers[0].send({ close: id });
    rig.server.send({ close: id });
    await sleep(200);
  }
  return { timings, failed };
}

/** N connects, five at a time; a connect that fails is counted, closed on both sides, and left out. */
async function connectAll(rig: Rig, n: number): Promise<{ timings: ConnectTiming[]; failed: number }> {
  const timings: ConnectTiming[] = [];
  let failed = 0;
  for (let i = 0; i < n; i += 5) {
    const batch = Array.from({ length: Math.min(5, n - i) }, (_, k) => {
      const viewer = rig.viewers[(i + k) % rig.viewers.length];
      const id = rig.nextId;
      return connect(rig, viewer).catch((e: Error) => {
        failed++;
        console.error(`connect: ${e.message}`);
        viewer.send({ close: id });
        rig.server.send({ close: id });
        return undefined;
      });
    });
    for (const t of await Promise.all(batch)) if (t) timings.push(t);
  }
  return { timings, failed };
}

/** N viewers (five connects at a time), a settle, then one steady window. */
async function fanOut(rig: Rig, stack: string, n: number, round: number): Promise<ConfigRow> {
  const { timings, failed } = await connectAll(rig, n);
  await sleep(3000);
  const pid = rig.server.pid;
  const [in0, v0] = [await serverIn(rig), await viewerCounts(rig)];
  const c0 = cpuSeconds(pid);
  const w0 = performance.now();
  await sleep(SECONDS * 1000);
  const cpu = (cpuSeconds(pid) - c0) / ((performance.now() - w0) / 1000) * 100;
  const wall = (performance.now() - w0) / 1000;
  const [in1, v1] = [await serverIn(rig), await viewerCounts(rig)];
  const before = new Map(v0.map((p) => [p.id, p]));
  const per = v1.filter((p) => before.has(p.id)).map((p) => {
    const b = before.get(p.id) as PeerCount;
    return { video: p.videoPackets - b.videoPackets, bytes: p.videoBytes - b.videoBytes, audio: p.audioPackets - b.audioPackets };
  });
  const videoIn = in1.video - in0.video;
  return {
    stack, viewers: n, round, cpuPercent: cpu, cpuPerViewer: cpu / n, rssMb: rssMb(pid), threads: threads(pid),
    viewersCounted: per.length, viewersFlowing: per.filter((p) => p.video > 0 && p.audio > 0).length,
    videoInPackets: videoIn, audioInPackets: in1.audio - in0.audio, videoInGaps: in1.videoGaps - in0.videoGaps, failed,
    minVideoShare: per.length ? Math.min(...per.map((p) => p.video / Math.max(1, videoIn))) : 0,
    minMbit: per.length ? Math.min(...per.map((p) => (p.bytes * 8) / wall / 1e6)) : 0,
    maxMbit: per.length ? Math.max(...per.map((p) => (p.bytes * 8) / wall / 1e6)) : 0,
    load1: loadavg()[0], timings,
  };
}

async function runConfig(stack: string, n: number, round: number, file: string): Promise<{ row: ConfigRow; start: ConnectTiming[] }> {
  const rig = await startRig(stack, n, file);
  try {
    const start = n === COUNTS[0] ? await startTimes(rig, START_CONNECTS) : { timings: [], failed: 0 };
    const row = await fanOut(rig, stack, n, round);
    row.startFailed = start.failed;
    console.log(JSON.stringify({ ...row, timings: undefined, cpuPercent: row.cpuPercent.toFixed(1), load1: row.load1.toFixed(2) }));
    return { row, start: start.timings };
  } finally {
    await stopRig(rig);
  }
}

async function main(): Promise<void> {
  const file = clip();
  const rows: ConfigRow[] = [];
  const starts = new Map<string, ConnectTiming[]>();
  const loads: number[][] = [loadavg()];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const n of COUNTS) {
      for (const stack of round % 2 ? NAMES : [...NAMES].reverse()) {
        if (n > (MAX.get(stack) ?? Infinity)) continue;
        const { row, start } = await runConfig(stack, n, round, file);
        rows.push(row);
        starts.set(stack, [...(starts.get(stack) ?? []), ...start]);
        await sleep(1000);
      }
    }
    loads.push(loadavg());
  }
  await writeReport({ seconds: SECONDS, rounds: ROUNDS, rows, starts, loads });
}

main().then(() => process.exit(0), (e: Error) => { console.error(e); process.exit(1); });
