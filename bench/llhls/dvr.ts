import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlvToTs } from '../../core/streams/remux/index.ts';
import { flvPacketOf } from '../../sdk/index.ts';
import { readFlv } from '../../test/core/streams/remux/helpers.ts';
import { remuxRecorded } from '../../plugins/llhls/dvr-remux.ts';
import { DvrWindow, renderDvr, type RecordedEntry } from '../../plugins/llhls/dvr-window.ts';
import { opt } from './common.ts';

/**
 * What the DVR playlist (issue 47.4) costs per request and per recorded segment, in one process:
 * - remux: one recorded MPEG-TS segment (`--seconds`, default 6, of 1280x720 25 fps H.264 at
 *   `--kbit` 2500 + AAC, cut as the recorder cuts it) to CMAF (`remuxRecorded`), ms each: what a
 *   DVR viewer's first ask of a recorded segment costs main (the next askers get the kept one);
 * - render: the DVR playlist of a `--window` (default 7200 s) of 2 s segments, half recorded and
 *   half the packager's archive (`DvrWindow.listing` + `renderDvr`), ms each: made once per change
 *   of the archive or the recording, at most every 250 ms, whatever the viewers.
 * Run: `node bench/llhls/dvr.ts [--seconds 6] [--kbit 2500] [--window 7200] [--write]`
 */

const SECONDS = Number(opt('seconds', '6'));
const KBIT = Number(opt('kbit', '2500'));
const WINDOW = Number(opt('window', '7200'));
const WRITE = process.argv.includes('--write');

function segment(dir: string): Buffer {
  const file = join(dir, 'sample.flv');
  const r = spawnSync('ffmpeg', [
    '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440',
    '-t', String(SECONDS), '-c:v', 'libx264', '-preset', 'ultrafast', '-b:v', `${KBIT}k`, '-g', String(SECONDS * 25), '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-b:a', '128k', '-f', 'flv', file,
  ], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('ffmpeg could not make the sample');
  const remux = new FlvToTs();
  const out: Buffer[] = [];
  for (const tag of readFlv(readFileSync(file))) {
    const ts = remux.push(flvPacketOf(tag));
    if (ts) out.push(ts);
  }
  return Buffer.concat(out);
}

function timeEach(n: number, fn: () => void): { p50: number; p95: number } {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(n / 2)]!, p95: ms[Math.floor(n * 0.95)]! };
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'bench-dvr-'));
  const ts = segment(dir);
  rmSync(dir, { recursive: true, force: true });
  const remux = timeEach(50, () => { if (!remuxRecorded(ts)) throw new Error('no remux'); });

  // a window of 2 s segments: the first half recorded, the second the packager's archive
  const T0 = 1_700_000_000_000;
  const n = WINDOW / 2;
  const recorded: RecordedEntry[] = [];
  for (let i = 0; i < n / 2; i++) recorded.push({ msn: i, start: T0 + i * 2000, duration: 2, discontinuity: false });
  const w = new DvrWindow();
  for (let i = 0; i < n / 2; i++) {
    w.add({ msn: 100 + i, start: T0 + (n / 2 + i) * 2000, duration: 2, uri: `e-${100 + i}.m4s`, init: 'e-init0.mp4', discontinuity: false }, recorded);
  }
  let bytes = 0;
  const render = timeEach(50, () => { bytes = renderDvr(w.listing(recorded, 0, T0 - 1000, false)!).length; });

  const load = spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
  const head = spawnSync('git', ['log', '-1', '--format=%h %s'], { encoding: 'utf8' }).stdout.trim().slice(0, 90);
  const lines = [
    `# The DVR playlist's costs in one process (issue 47.4), ${new Date().toISOString()}`, '',
    `${cpus().length} CPUs (${cpus()[0]?.model.trim()}), Node ${process.version}. Commit: ${head}.`, `uptime: \`${load}\`.`, '',
    '| what | p50 ms | p95 ms | size |', '|---|---:|---:|---|',
    `| remux one recorded segment to CMAF (${SECONDS} s, 720p ${KBIT} kbit/s + AAC) | ${remux.p50.toFixed(2)} | ${remux.p95.toFixed(2)} | ${(ts.length / 1e6).toFixed(2)} MB of TS |`,
    `| render the DVR playlist (${WINDOW} s of 2 s segments, half recorded, half archived) | ${render.p50.toFixed(2)} | ${render.p95.toFixed(2)} | ${(bytes / 1e3).toFixed(0)} kB |`,
    '', 'Command: `node bench/llhls/dvr.ts' + (process.argv.slice(2).length ? ' ' + process.argv.slice(2).join(' ') : '') + '`.', '',
  ];
  console.log(lines.join('\n'));
  if (WRITE) writeFileSync(new URL(`../results/llhls-dvr-${new Date().toISOString().slice(0, 10)}.md`, import.meta.url), lines.join('\n'));
}

main();
