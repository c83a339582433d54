import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { quantile } from './ipc.ts';

/** Times from the server's offer request, in ms (epoch clocks of the processes on one machine). */
export interface ConnectTiming { offerMs: number; answerMs: number; connectedMs: number; firstRtpMs: number }

export interface ConfigRow {
  stack: string; viewers: number; round: number;
  cpuPercent: number; cpuPerViewer: number; rssMb: number; threads: number;
  viewersCounted: number; viewersFlowing: number; videoInPackets: number; audioInPackets: number;
  /** RTP sequence gaps in the video the server took in (lost in its socket buffer: a late event loop). */
  videoInGaps: number;
  /** Connects that failed (no first RTP within 20 s) while the N connected, and in the start phase. */
  failed: number; startFailed?: number;
  /** The worst viewer's video packets over the packets the server took in, in the window. */
  minVideoShare: number; minMbit: number; maxMbit: number; load1: number;
  timings: ConnectTiming[];
}

export interface Report {
  seconds: number; rounds: number; rows: ConfigRow[];
  starts: Map<string, ConnectTiming[]>; loads: number[][];
}

const f1 = (x: number): string => x.toFixed(1);
const f2 = (x: number): string => x.toFixed(2);

function spread(values: number[], fmt: (x: number) => string): string {
  if (values.length === 0) return '-';
  const s = [...values].sort((a, b) => a - b);
  const mid = quantile(s, 0.5);
  return s.length === 1 ? fmt(mid) : `${fmt(mid)} (${fmt(s[0])}-${fmt(s[s.length - 1])})`;
}

function fanOutTable(rows: ConfigRow[]): string[] {
  const out = [
    '| stack | viewers | runs | server CPU % of a core | CPU % per viewer | RSS MB | threads | viewers with media (failed connects) | video pkts in (gaps) | worst viewer video pkts / pkts in | Mbit/s per viewer (min-max) | load1 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const keys = [...new Set(rows.map((r) => `${r.stack}|${r.viewers}`))];
  for (const key of keys) {
    const rs = rows.filter((r) => `${r.stack}|${r.viewers}` === key);
    out.push(`| ${rs[0].stack} | ${rs[0].viewers} | ${rs.length} | ${spread(rs.map((r) => r.cpuPercent), f1)} | ` +
      `${spread(rs.map((r) => r.cpuPerViewer), f2)} | ${spread(rs.map((r) => r.rssMb), (x) => x.toFixed(0))} | ` +
      `${Math.max(...rs.map((r) => r.threads))} | ${rs.map((r) => `${r.viewersFlowing}/${r.viewers} (${r.failed})`).join(', ')} | ` +
      `${rs.map((r) => `${r.videoInPackets} (${r.videoInGaps})`).join(', ')} | ` +
      `${spread(rs.map((r) => r.minVideoShare), (x) => x.toFixed(3))} | ` +
      `${f2(Math.min(...rs.map((r) => r.minMbit)))}-${f2(Math.max(...rs.map((r) => r.maxMbit)))} | ` +
      `${rs.map((r) => f1(r.load1)).join(', ')} |`);
  }
  return out;
}

function slopeTable(rows: ConfigRow[]): string[] {
  const out = ['| stack | CPU % per added viewer, 10 -> 50 (each round) |', '|---|---|'];
  for (const stack of [...new Set(rows.map((r) => r.stack))]) {
    const slopes: string[] = [];
    for (const round of [...new Set(rows.map((r) => r.round))]) {
      const a = rows.find((r) => r.stack === stack && r.round === round && r.viewers === 10);
      const b = rows.find((r) => r.stack === stack && r.round === round && r.viewers === 50);
      if (a && b) slopes.push(f2((b.cpuPercent - a.cpuPercent) / 40));
    }
    out.push(`| ${stack} | ${slopes.join(', ') || '-'} |`);
  }
  return out;
}

function startTable(starts: Map<string, ConnectTiming[]>, rows: ConfigRow[]): string[] {
  const out = [
    '| stack | connects (failed) | offer ready p50 | answer back p50 | connected (ICE + DTLS) p50 | first RTP p50 | first RTP p95 | first RTP max | first RTP p50 / p95 under load (10, 50 viewers connecting 5 at a time) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [stack, ts] of starts) {
    const q = (k: keyof ConnectTiming, p: number): string => quantile(ts.map((t) => t[k]), p).toFixed(0);
    const loaded = rows.filter((r) => r.stack === stack && r.viewers >= 10).flatMap((r) => r.timings.map((t) => t.firstRtpMs));
    const failed = rows.filter((r) => r.stack === stack).reduce((a, r) => a + (r.startFailed ?? 0), 0);
    out.push(`| ${stack} | ${ts.length} (${failed}) | ${q('offerMs', 0.5)} | ${q('answerMs', 0.5)} | ${q('connectedMs', 0.5)} | ` +
      `${q('firstRtpMs', 0.5)} | ${q('firstRtpMs', 0.95)} | ${q('firstRtpMs', 1)} | ` +
      `${quantile(loaded, 0.5).toFixed(0)} / ${quantile(loaded, 0.95).toFixed(0)} (${loaded.length}) |`);
  }
  return out;
}

export async function writeReport(r: Report): Promise<void> {
  const date = new Date().toISOString().slice(0, 10);
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const md = [
    `# WebRTC stacks: CPU per viewer and start time (${date})`, '',
    `Node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${r.rounds} rounds, ${r.seconds} s window per configuration.`,
    `Load average (1, 5, 15 min) at start and after each round: ${r.loads.map((l) => l.map(f2).join(' ')).join(' | ')}.`, '',
    'Medians, with the spread over the runs in parentheses (min-max).', '',
    '## Fan-out (server process, one steady window)', '', ...fanOutTable(r.rows), '',
    ...slopeTable(r.rows), '',
    '## Start time (ms from the offer request: offer with all candidates, answer, ICE and DTLS connected, first video RTP at the viewer)', '',
    ...startTable(r.starts, r.rows), '',
  ].join('\n');
  const json = { date, node: process.version, cpus: cpus().length, loads: r.loads, seconds: r.seconds, rows: r.rows,
    starts: Object.fromEntries(r.starts) };
  const tag = process.env.WEBRTC_RESULT_TAG ? `-${process.env.WEBRTC_RESULT_TAG}` : '';
  await writeFile(`${dir}webrtc-stacks-${date}${tag}.json`, JSON.stringify(json, null, 1));
  await writeFile(`${dir}webrtc-stacks-${date}${tag}-tables.md`, md);
  console.log(md);
}
