import t from 'tap';
import { spawnSync } from 'node:child_process';
import { Splicer } from '../../../../plugins/playout/relay/splicer.ts';
import { TsInput } from '../../../../plugins/playout/relay/ts-input.ts';
import { hasPayload, isUnitStart, pidOf, readPesStamps, splitPackets, TS_WRAP } from '../../../../plugins/playout/relay/ts-packet.ts';

/** One second of TS from ffmpeg's muxer (the same muxer the source and the clip use). */
function ts(offsetSeconds: number, size = '160x120', audio = true): { input: TsInput; packets: Buffer[] } {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=25`,
    ...(audio ? ['-f', 'lavfi', '-i', 'sine=r=48000'] : []), '-t', '1', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10',
    ...(audio ? ['-c:a', 'aac'] : []),
    '-output_ts_offset', String(offsetSeconds), '-f', 'mpegts', 'pipe:1'], { maxBuffer: 1 << 26 });
  const packets: Buffer[] = [];
  splitPackets(r.stdout, packets);
  const input = new TsInput();
  for (const p of packets) input.observeTables(p);
  return { input, packets };
}

interface Out { packets: Buffer[]; keys: number[] }

function splice(parts: { input: TsInput; packets: Buffer[]; from?: number }[]): Out {
  const out: Out = { packets: [], keys: [] };
  const s = new Splicer((p, key) => { if (key) out.keys.push(out.packets.length); out.packets.push(Buffer.from(p)); });
  for (const part of parts) {
    s.begin(part.input);
    for (const p of part.packets.slice(part.from ?? 0)) s.feed(Buffer.from(p));
  }
  return out;
}

/** DTS per PID in output order, unwrapped. */
function dtsOf(packets: Buffer[], pid: number): number[] {
  const d: number[] = [];
  for (const p of packets) {
    const st = pidOf(p) === pid && isUnitStart(p) ? readPesStamps(p) : null;
    if (!st) continue;
    let v = st.dts;
    while (d.length > 0 && v < d.at(-1)! - TS_WRAP / 2) v += TS_WRAP;
    d.push(v);
  }
  return d;
}

t.test('B continues A one frame after A\'s last frame, whatever B\'s own timestamps', async (t) => {
  const a = ts(0);
  const b = ts(5000);
  const out = splice([a, { ...b, from: 40 }]); // B joined mid-stream: it starts at its next keyframe
  const v = dtsOf(out.packets, a.input.primary);
  const steps = v.slice(1).map((x, i) => x - v[i]!);
  t.ok(steps.every((s) => s === 3600), 'video DTS step one frame (3600) everywhere, across the splice');
  const audioPid = a.input.streams.find((s) => s.kind === 'audio')!.pid;
  const au = dtsOf(out.packets, audioPid);
  t.ok(au.slice(1).every((x, i) => x > au[i]!), 'audio strictly increasing');
  t.equal(pidOf(out.packets[0]!), 0, 'the output starts with the PAT');
  t.equal(out.keys[0], 2, 'then the PMT, then the keyframe');
  const spliceAt = out.keys.find((k) => k > 2 && pidOf(out.packets[k - 2]!) === 0 && pidOf(out.packets[k - 1]!) === a.input.pmtPid);
  t.ok(spliceAt, 'the splice repeats PAT and PMT right before B\'s keyframe');
});

t.test('continuity counters run on per PID across splices', async (t) => {
  const a = ts(0);
  const out = splice([a, a, a]);
  const last = new Map<number, number>();
  let bad = 0;
  for (const p of out.packets) {
    if (!hasPayload(p)) continue;
    const pid = pidOf(p);
    const cc = p[3]! & 0x0f;
    if (last.has(pid) && cc !== ((last.get(pid)! + 1) & 0x0f)) bad++;
    last.set(pid, cc);
  }
  t.equal(bad, 0);
});

t.test('timestamps wrapping at 2^33 inside a segment stay continuous', async (t) => {
  const a = ts(0);
  const w = ts(TS_WRAP / 90_000 - 0.5); // wraps half a second in
  const out = splice([a, w, a]);
  const v = dtsOf(out.packets, a.input.primary);
  t.ok(v.slice(1).every((x, i) => x - v[i]! === 3600), 'one frame per step through the wrap and both splices');
});

t.test('nothing passes before the first keyframe of a segment', async (t) => {
  const a = ts(0);
  const noKey = a.packets.filter((p) => !a.input.isKeyframe(p));
  t.equal(splice([{ input: a.input, packets: noKey }]).packets.length, 0);
});

t.test('a segment with another PMT (no audio) sends its own PMT at the splice', async (t) => {
  const a = ts(0);
  const b = ts(0, '160x120', false);
  t.not(a.input.layout(), b.input.layout(), 'the fixtures differ');
  const out = splice([a, b]);
  const body = (p: Buffer) => p.subarray(4).toString('hex'); // the PMT without its header (the counter differs)
  const bPmtAt = out.packets.findIndex((p) => pidOf(p) === b.input.pmtPid && body(p) === body(b.input.pmt!));
  t.ok(bPmtAt > 0, 'B\'s PMT is sent');
  t.equal(out.keys.find((k) => k > bPmtAt), bPmtAt + 1, 'right before B\'s keyframe');
  const audioPid = a.input.streams.find((s) => s.kind === 'audio')!.pid;
  t.ok(out.packets.slice(0, bPmtAt).some((p) => pidOf(p) === audioPid), 'A had audio');
  t.notOk(out.packets.slice(bPmtAt).some((p) => pidOf(p) === audioPid), 'none after the splice');
});
