import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quantile } from './ipc.ts';
import type { DelayResult } from './whep-delay.ts';
import type { FanRow } from './whep-fanout.ts';

/** The results of `whep.ts`: bench/results/webrtc-whep-<date>[-tag].{json,md}, never over an existing file. */
/** The service's log lines at warn and above: their count, the count of each message, the first line of each. */
export interface ServiceLog { count: number; byMsg: Record<string, number>; lines: string[] }

export interface Report {
  windowS: number; rounds: number; counts: number[]; delayS: number; warmS: number; audio: string;
  delays: (DelayResult & { viewersUp?: number; failures?: string[] })[]; rows: FanRow[];
  loads: { at: string; load: number[] }[]; log: ServiceLog; publisher: Record<string, unknown>;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const AUDIO_TEXT: Record<string, string> = {
  pipe: 'AAC 64k of a 440 Hz sine that the publisher writes, 40 ms with each frame, into ffmpeg\'s fd 3 (`WHEP_AUDIO=pipe`)',
  lavfi: 'AAC 64k of `-re -f lavfi -i sine` (`WHEP_AUDIO=lavfi`: paced from ffmpeg\'s start, behind the piped video, so the FLV muxer holds video until audio catches up)',
  none: 'no audio (`WHEP_AUDIO=none`)',
};
const f0 = (x: number): string => (Number.isFinite(x) ? x.toFixed(0) : '-');
const f1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '-');
const f2 = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : '-');

/** Median and range of one figure over the runs of a configuration. */
function spread(xs: number[], fmt: (x: number) => string): string {
  if (xs.length === 0) return '-';
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 1 ? fmt(s[0]!) : `${fmt(quantile(s, 0.5))} (${fmt(s[0]!)}-${fmt(s[s.length - 1]!)})`;
}

function versions(): string {
  const v = (cmd: string, args: string[]) => { try { return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0]!.trim(); } catch { return '?'; } };
  const ndc = JSON.parse(readFileSync(join(ROOT, 'node_modules/node-datachannel/package.json'), 'utf8')).version as string;
  return `Node ${process.version}, node-datachannel ${ndc}, ${v('ffmpeg', ['-version']).replace(/ Copyright.*/, '')}, ` +
    `${v(process.env.CHROMIUM ?? '/usr/bin/chromium', ['--version'])}; ${cpus().length} cores (${cpus()[0]?.model.trim()})`;
}

function loadLines(r: Report): string[] {
  const cores = cpus().length;
  const peak = Math.max(...r.loads.map((l) => l.load[0]!));
  const busy = r.loads[0]!.load[0]! > 0.5 * cores || peak > 1.5 * cores;
  return [
    `Load average (1, 5, 15 min): ${r.loads.map((l) => `${l.at} ${l.load.map(f2).join(' ')}`).join('; ')}.`,
    busy
      ? `**The box was busy** (load ${f2(r.loads[0]!.load[0]!)} at the start, up to ${f2(peak)} on ${cores} cores, the bench's own processes included): CPU time is the reliable figure, delays are inflated.`
      : `The box was otherwise quiet (load ${f2(r.loads[0]!.load[0]!)} at the start, at most ${f2(peak)} with the bench's own processes on ${cores} cores).`,
  ];
}

function delayTable(r: Report): string[] {
  const out = [
    '| window | frames read (of ~25/s) | misread, duplicated, skipped | p50 ms | p95 ms | max ms | min ms | at display time p50 / p95 | jitter buffer ms/frame | decoded / dropped | freezes | RTP lost | first frame after page load ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const d of r.delays) {
    out.push(`| ${d.label} | ${d.frames} (${Math.round(d.windowS * 25)}) | ${d.misreads}, ${d.duplicates}, ${d.skipped} | ${f0(d.p50)} | ${f0(d.p95)} | ${f0(d.max)} | ${f0(d.min)} | ` +
      `${f0(d.displayP50)} / ${f0(d.displayP95)} | ${f1(d.jitterBufferMs)} | ${d.framesDecoded} / ${d.framesDropped} | ${d.freezes} | ${d.packetsLost} | ${f0(d.firstFrameMs)} |`);
  }
  return out;
}

const byCount = (r: Report) => [...new Set(r.rows.map((x) => x.viewers))].sort((a, b) => a - b).map((n) => r.rows.filter((x) => x.viewers === n));
const cpu = (x: FanRow, p: string) => x.procs[p]?.cpuPercent ?? NaN;
const sum3 = (x: FanRow) => cpu(x, 'service') + cpu(x, 'host') + cpu(x, 'feed');

function fanTable(r: Report): string[] {
  const out = [
    '| viewers | runs | up (failed attempts) | service CPU % | host CPU % | feed ffmpeg CPU % | the three together % | service RSS MB | host RSS MB | feed RSS MB | video Mbit/s per viewer (min-max) | viewers at full rate | RTP seq missing (video, audio) | publisher out Mbit/s | publisher ffmpeg CPU % | viewer processes CPU % | load1 |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const rs of byCount(r)) {
    const rss = (p: string) => spread(rs.map((x) => x.procs[p]?.rssMaxMb ?? NaN), f0);
    out.push(`| ${rs[0]!.viewers} | ${rs.length} | ${rs.map((x) => `${x.connected} (${x.failed})`).join(', ')} | ` +
      `${spread(rs.map((x) => cpu(x, 'service')), f1)} | ${spread(rs.map((x) => cpu(x, 'host')), f1)} | ${spread(rs.map((x) => cpu(x, 'feed')), f1)} | ` +
      `${spread(rs.map(sum3), f1)} | ${rss('service')} | ${rss('host')} | ${rss('feed')} | ` +
      `${f2(Math.min(...rs.map((x) => x.videoMbit[0])))}-${f2(Math.max(...rs.map((x) => x.videoMbit[2])))} | ` +
      `${rs.map((x) => `${x.viewersFull}/${x.connected}`).join(', ')} | ${rs.map((x) => `${x.videoLost}, ${x.audioLost}`).join('; ')} | ` +
      `${spread(rs.map((x) => x.publisherMbit), f2)} | ${spread(rs.map((x) => cpu(x, 'publisher')), f1)} | ${spread(rs.map((x) => cpu(x, 'viewers')), f1)} | ` +
      `${rs.map((x) => f1(x.load1)).join(', ')} |`);
  }
  return out;
}

function slopes(r: Report): string[] {
  const lo = Math.min(...r.counts);
  const hi = Math.max(...r.counts);
  const out = [`| round | CPU % per added viewer, ${lo} -> ${hi}: host | service | feed | the three together |`, '|---:|---:|---:|---:|---:|'];
  for (const round of [...new Set(r.rows.map((x) => x.round))]) {
    const a = r.rows.find((x) => x.round === round && x.viewers === lo);
    const b = r.rows.find((x) => x.round === round && x.viewers === hi);
    if (!a || !b || hi === lo) continue;
    const s = (f: (x: FanRow) => number) => f2((f(b) - f(a)) / (hi - lo));
    out.push(`| ${round} | ${s((x) => cpu(x, 'host'))} | ${s((x) => cpu(x, 'service'))} | ${s((x) => cpu(x, 'feed'))} | ${s(sum3)} |`);
  }
  return out;
}

function connectLines(r: Report): string[] {
  const all = r.rows.flatMap((x) => x.timings);
  const q = (k: keyof FanRow['timings'][number]) => `${f0(quantile(all.map((t) => t[k]), 0.5))} / ${f0(quantile(all.map((t) => t[k]), 0.95))} / ${f0(Math.max(...all.map((t) => t[k])))}`;
  const failures = [
    ...r.rows.flatMap((x) => x.failures.map((f) => `${x.viewers} viewers, round ${x.round}: ${f}`)),
    ...r.delays.flatMap((d) => (d.failures ?? []).map((f) => `delay window ${d.label}: ${f}`)),
  ];
  const statuses: Record<string, number> = {};
  for (const x of r.rows) for (const [k, v] of Object.entries(x.deleteStatuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return [
    `| connects (five at a time) | offer gathered | answer back (POST) | ICE + DTLS connected | first video RTP |`,
    '|---:|---:|---:|---:|---:|',
    `| ${all.length} up, ${failures.length} failed attempts | ${q('offerMs')} | ${q('answerMs')} | ${q('connectedMs')} | ${q('firstRtpMs')} |`,
    '',
    'ms from the viewer\'s start, p50 / p95 / max, fan-out windows only. The first video packet waits for the next keyframe (one a second). ' +
      'A failed attempt is tried again (at most 3 per viewer; see ATTEMPTS in whep-fanout.ts for the libdatachannel offerer race behind them).',
    '',
    `DELETE of the sessions: ${Object.entries(statuses).map(([k, v]) => `${v} x ${k}`).join(', ')}; WHEP sessions still listed 10 s after: ` +
      `${r.rows.map((x) => x.sessionsLeft).join(', ')}; sessions the service listed as connected in each window: ${r.rows.map((x) => `${x.sessionsConnected}/${x.viewers}`).join(', ')}.`,
    ...(failures.length ? ['', 'Failed connects:', ...failures.map((f) => `- ${f}`)] : []),
  ];
}

function runTable(r: Report): string[] {
  const out = ['| round | viewers | service % | host % | feed % | RSS service / host / feed MB | video Mbit/s min / median / max | audio kbit/s min-max | full | load1 |', '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'];
  for (const x of r.rows) {
    out.push(`| ${x.round} | ${x.viewers} | ${f1(cpu(x, 'service'))} | ${f1(cpu(x, 'host'))} | ${f1(cpu(x, 'feed'))} | ` +
      `${f0(x.procs.service?.rssMaxMb ?? NaN)} / ${f0(x.procs.host?.rssMaxMb ?? NaN)} / ${f0(x.procs.feed?.rssMaxMb ?? NaN)} | ` +
      `${x.videoMbit.map(f2).join(' / ')} | ${f0(x.audioKbit[0])}-${f0(x.audioKbit[2])} | ${x.viewersFull}/${x.connected} | ${f1(x.load1)} |`);
  }
  return out;
}

const distinct = (r: Report, p: string) => [...new Set(r.rows.map((x) => x.procs[p]?.pid))].join(', ') || '-';

function logLines(log: ServiceLog): string[] {
  if (log.count === 0) return ['Service log lines at warn or above: none.'];
  return [
    `Service log lines at warn or above: ${log.count}.`, '', '| times | message |', '|---:|---|',
    ...Object.entries(log.byMsg).sort((a, b) => b[1] - a[1]).map(([m, n]) => `| ${n} | ${m.replace(/\|/g, '\\|')} |`),
    '', 'The first line of each:', '', '```', ...log.lines, '```',
  ];
}

/** The fan-out part (none when the run had no rounds: a delay-only run). */
function fanSection(r: Report): string[] {
  if (r.rows.length === 0) return [];
  return [
    '## Fan-out: CPU and RSS per viewer count (median and min-max of the runs)',
    '',
    `WHEP viewers are node-datachannel peers in \`whep-viewer.ts\` processes (25 a process) that offer recvonly H.264 and Opus, POST the offer with the Bearer token and count the RTP they get. ` +
      `Counts alternate (${r.counts.join(', ')}, then reversed) over ${r.rounds} rounds; per configuration the viewers connect five at a time, 3 s settle, one ${r.windowS} s window: ` +
      'CPU = utime + stime of all threads from /proc over the window (% of one core), RSS = the highest of the per-second readings. ' +
      '"full rate": video at 99 % of the best viewer\'s and no RTP sequence number missing.',
    '',
    ...fanTable(r),
    '',
    ...slopes(r),
    '',
    `Aim 50 viewers under 50 % of one core: service + host + feed at ${Math.max(...r.counts)} viewers ${spread(r.rows.filter((x) => x.viewers === Math.max(...r.counts)).map(sum3), f1)} %.`,
    '',
    '### Every run',
    '',
    ...runTable(r),
    '',
    '### Connects and session ends',
    '',
    ...connectLines(r),
    '',
  ];
}

function markdown(r: Report, date: string): string {
  const p = r.publisher;
  return [
    `# WHEP glass-to-glass delay and fan-out of the webrtc plugin (issue 33.5), ${date}`,
    '',
    `Bench: \`bench/webrtc/whep.ts\` (\`${r.audio === 'pipe' ? '' : `WHEP_AUDIO=${r.audio} `}node bench/webrtc/whep.ts ${r.windowS} ${r.rounds} ${r.counts.join(',')} ${r.delayS}\`), one run. ${versions()}.`,
    '',
    ...loadLines(r),
    '',
    'Set-up: the service runs in its own process (`whep-service.ts`: default plugins, RTMP and WebRTC on, `webrtc.bind_address` 127.0.0.1, a token, log level warn). ' +
      '`whep-publisher.ts` draws Date.now() as a 64-block barcode (48 bits and a CRC-16, 32 px blocks) into raw yuv420p 1280x720 25 fps frames of deterministic noise, ' +
      `piped into ffmpeg (libx264 ultrafast, zerolatency, \`-g 25\`, \`-b:v 2500k\`; ${AUDIO_TEXT[r.audio] ?? r.audio}) that publishes FLV over RTMP to the service. ` +
      'Per watched stream the service runs one feed ffmpeg (H.264 passed through, Opus made) whose RTP the WebRTC host process (`plugins/webrtc/host/entry.ts`, a child of the service) fans out.',
    '',
    '## Glass-to-glass delay (Chromium, the player page)',
    '',
    `Headless Chromium opens \`/webrtc/live/bench?token=..\`; in the page \`requestVideoFrameCallback\` draws each presented frame's code area to a canvas and reads it: delay = Date.now() in the callback minus the stamp (one machine clock). ` +
      `${r.warmS} s of warm-up after the first frame, then a ${r.delayS} s window. A misread (CRC fails) is left out; "skipped" are frames presented without a callback.`,
    '',
    ...delayTable(r),
    '',
    `Aim p95 under 800 ms: ${r.delays.map((d) => `${d.label} ${d.p95 < 800 ? 'met' : '**not met**'} (${f0(d.p95)} ms)`).join(', ')}.`,
    '',
    ...fanSection(r),
    '## Publisher, processes and service log',
    '',
    `Publisher: ${p.frames} frames written, ${p.late} over 20 ms late, at most ${p.maxQueuedFrames} frames waiting in ffmpeg's pipe.` +
      (r.rows.length ? ` Process ids in the windows: host ${distinct(r, 'host')}, feed ffmpeg ${distinct(r, 'feed')} (a new id: that process was started again).` : ''),
    '',
    ...logLines(r.log),
    '',
  ].join('\n');
}

export async function writeReport(r: Report): Promise<void> {
  const date = new Date().toISOString().slice(0, 10);
  const tag = process.env.WHEP_TAG ? `-${process.env.WHEP_TAG}` : '';
  const dir = process.env.WHEP_OUT ?? join(ROOT, 'bench/results');
  await mkdir(dir, { recursive: true });
  const base = join(dir, `webrtc-whep-${date}${tag}`);
  const json = { date, node: process.version, cpus: cpus().length, ...r };
  // 'wx': an existing result is never overwritten (set WHEP_TAG for another run of the day)
  await writeFile(`${base}.json`, JSON.stringify(json, null, 1) + '\n', { flag: 'wx' });
  await writeFile(`${base}.md`, markdown(r, date), { flag: 'wx' });
  console.log(`wrote ${base}.{json,md}`);
}
