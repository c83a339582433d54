import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { FlvToTs, TsToFlv, type FlvTag } from '../../core/streams/remux/index.ts';

/**
 * Remux throughput (issue 30): the FLV and TS fixtures looped through FlvToTs and TsToFlv in this
 * process, tags/s and MB/s of input. TS is pushed in 1316-byte chunks (7 packets, as SRT carries).
 *
 *   node bench/streams/remux.ts [seconds per case, default 3] [label]
 *
 * Writes bench/results/remux-<date>[-label].md.
 */
const SECONDS = Number(process.argv[2] ?? 3);
const LABEL = process.argv[3];
const FIX = fileURLToPath(new URL('../../test/fixtures/remux/', import.meta.url));

function readFlv(file: Buffer): FlvTag[] {
  const tags: FlvTag[] = [];
  for (let p = file.readUInt32BE(5) + 4; p + 11 <= file.length;) {
    const size = file.readUIntBE(p + 1, 3);
    const type = file[p] & 0x1f;
    if (type === 8 || type === 9 || type === 18) tags.push({ type, timestamp: (file.readUIntBE(p + 4, 3) | (file[p + 7] << 24)) >>> 0, body: file.subarray(p + 11, p + 11 + size) });
    p += 15 + size;
  }
  return tags;
}

interface Row { name: string; tagsPerSec: number; mbPerSec: number; outMbPerSec: number }

/** Loops `once` (returns [tags, input bytes, output bytes]) for SECONDS. */
function measure(name: string, once: (loop: number) => [number, number, number]): Row {
  for (let i = 0; i < 20; i++) once(i);
  let tags = 0, bytes = 0, out = 0, loop = 0;
  const t0 = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < SECONDS) {
    const [a, b, c] = once(loop++);
    tags += a; bytes += b; out += c;
    elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  }
  return { name, tagsPerSec: tags / elapsed, mbPerSec: bytes / elapsed / 1e6, outMbPerSec: out / elapsed / 1e6 };
}

function flvCase(name: string): Row {
  const tags = readFlv(readFileSync(FIX + name));
  const bytes = tags.reduce((n, x) => n + x.body.length + 11, 0);
  const span = tags[tags.length - 1].timestamp + 40;
  const c = new FlvToTs();
  return measure(`FlvToTs ${name}`, (loop) => {
    let out = 0;
    for (const x of tags) out += c.push({ type: x.type, timestamp: x.timestamp + loop * span, body: x.body })?.length ?? 0;
    return [tags.length, bytes, out];
  });
}

function tsCase(name: string): Row {
  const ts = readFileSync(FIX + name);
  return measure(`TsToFlv ${name}`, () => {
    const c = new TsToFlv(); // a fresh demuxer per loop: the fixture's timestamps restart
    let n = 0, out = 0;
    for (let p = 0; p < ts.length; p += 1316) for (const x of c.push(ts.subarray(p, p + 1316))) { n++; out += x.body.length + 11; }
    for (const x of c.flush()) { n++; out += x.body.length + 11; }
    return [n, ts.length, out];
  });
}

const before = loadavg();
const rows = [flvCase('av.flv'), flvCase('audio.flv'), tsCase('av.mpegts'), tsCase('audio.mpegts')];
const after = loadavg();
const date = new Date().toISOString().slice(0, 10);
const md = [
  `# Remux throughput ${date}${LABEL ? ` (${LABEL})` : ''}`, '',
  `\`node bench/streams/remux.ts ${SECONDS}${LABEL ? ` ${LABEL}` : ''}\`: the fixtures of test/fixtures/remux looped for ${SECONDS} s per case in one`,
  `process (Node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}). MB/s of input (FLV: bodies + 11-byte tag headers; TS: packets) and of output.`,
  `Load (/proc/loadavg 1/5/15 min) before: ${before.map((x) => x.toFixed(2)).join(' ')}; after: ${after.map((x) => x.toFixed(2)).join(' ')}.`, '',
  '| case | tags/s | input MB/s | output MB/s |', '|---|---|---|---|',
  ...rows.map((r) => `| ${r.name} | ${Math.round(r.tagsPerSec)} | ${r.mbPerSec.toFixed(1)} | ${r.outMbPerSec.toFixed(1)} |`), '',
];
const file = fileURLToPath(new URL(`../results/remux-${date}${LABEL ? `-${LABEL}` : ''}.md`, import.meta.url));
writeFileSync(file, md.join('\n'));
console.log(md.join('\n'));
