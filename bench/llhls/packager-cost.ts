import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { flvPacketOf, type FlvPacket } from '../../sdk/index.ts';
import { readFlv } from '../../test/core/streams/remux/helpers.ts';
import { Packager } from '../../plugins/llhls/packager.ts';
import { renderMedia } from '../../plugins/llhls/playlist-render.ts';
import { opt } from './common.ts';

/**
 * The LL-HLS packager's own CPU per stream, in one process without the service (issue 47.6): N
 * streams of the streams bench's sample (320x240 25 fps H.264 300 kbit/s + AAC 64 kbit/s, as FLV)
 * fed as the stream table feeds a reader: each packet a fresh object with a fresh body (as the
 * RTMP ingest makes them), the GOP held as the table holds it for late readers, one batch per
 * stream per 10 ms of media time; every 2 media seconds a playlist request per stream (rendered
 * once per version, as the store does). Media time runs as fast as the CPU allows; the figure is
 * CPU seconds per stream and media second, i.e. the share of a core a real-time stream would take.
 * `--mode noop` feeds a sink that does nothing (the floor: the ingest's stand-in and the GOP).
 * Add `--trace-gc` for the collections (the measured part is the run's last `--measure` media seconds).
 * Run with the service's runtime flags (its 2 MiB semi-space):
 * `node --max-semi-space-size=2 bench/llhls/packager-cost.ts [--streams 50] [--seconds 240] [--measure 120] [--ll-window 120] [--mode llhls|noop]`
 */

const STREAMS = Number(opt('streams', '50'));
const SECONDS = Number(opt('seconds', '240'));
const MEASURE = Number(opt('measure', '120'));
const LL_WINDOW = Number(opt('ll-window', '120'));
const MODE = opt('mode', 'llhls');
const TICK_MS = 10;

function sample(dir: string): FlvPacket[] {
  const file = join(dir, 'sample.flv');
  const r = spawnSync('ffmpeg', [
    '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440',
    '-t', '10', '-c:v', 'libx264', '-preset', 'ultrafast', '-b:v', '300k', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k', '-f', 'flv', file,
  ], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('ffmpeg could not make the sample');
  return readFlv(readFileSync(file)).filter((t) => t.type !== 18).map(flvPacketOf);
}

interface Feed { at: number; loop: number; gop: FlvPacket[]; packager: Packager | undefined; rendered: number; text: Buffer | undefined }

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'packager-cost-'));
  const packets = sample(dir);
  rmSync(dir, { recursive: true, force: true });
  const headers = packets.filter((p) => p.kind === 'video-header' || p.kind === 'audio-header');
  const media = packets.filter((p) => p.kind === 'keyframe' || p.kind === 'frame');
  const loopMs = media[media.length - 1]!.timestamp + 40;
  let clock = 0;
  const feeds: Feed[] = Array.from({ length: STREAMS }, () => {
    const packager = MODE === 'noop' ? undefined : new Packager({
      targetDuration: 2, partTarget: 0.3, windowSegments: Math.ceil(LL_WINDOW / 2), maxBytes: 64 << 20, epoch: 'e', now: () => clock,
    });
    packager?.push(headers);
    return { at: 0, loop: 0, gop: [], packager, rendered: -1, text: undefined };
  });
  let measuring = false;
  let cpu0 = process.cpuUsage();
  let t0 = 0;
  for (let now = 0; now < SECONDS * 1000; now += TICK_MS) {
    clock = now;
    if (!measuring && now >= (SECONDS - MEASURE) * 1000) {
      measuring = true;
      cpu0 = process.cpuUsage();
      t0 = performance.now();
    }
    for (let i = 0; i < STREAMS; i++) step(feeds[i]!, media, loopMs, now + i * 7);
  }
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  const secs = (cpu.user + cpu.system) / 1e6;
  const perStream = (secs / (STREAMS * MEASURE)) * 100;
  console.log(`${MODE}: ${STREAMS} streams, ${MEASURE} media s measured: ${secs.toFixed(2)} s CPU (${(wall / 1000).toFixed(2)} s wall): ${perStream.toFixed(4)} % of a core per real-time stream`);
  const mem = process.memoryUsage();
  console.log(`  heap used ${(mem.heapUsed / 1048576).toFixed(1)} MB, external+arrayBuffers ${(mem.arrayBuffers / 1048576).toFixed(1)} MB, rss ${(mem.rss / 1048576).toFixed(1)} MB`);
}

/** One stream's packets of media time up to `now` as one batch (fresh objects and bodies), and a playlist request every 2 s. */
function step(f: Feed, media: readonly FlvPacket[], loopMs: number, now: number): void {
  const batch: FlvPacket[] = [];
  while (f.loop * loopMs + media[f.at]!.timestamp <= now) {
    const src = media[f.at]!;
    const body = Buffer.allocUnsafe(src.body.length + 16);
    src.body.copy(body);
    const p: FlvPacket = { kind: src.kind, type: src.type, codec: src.codec, timestamp: f.loop * loopMs + src.timestamp, body: body.subarray(0, src.body.length) };
    if (p.kind === 'keyframe') f.gop = [p];
    else f.gop.push(p);
    batch.push(p);
    if (++f.at === media.length) { f.at = 0; f.loop++; }
  }
  if (batch.length > 0) f.packager?.push(batch);
  if (f.packager && now % 2000 < TICK_MS) {
    // the store renders once per version; a poller every 2 s sees a new one each time
    if (f.rendered !== f.packager.version) {
      f.text = Buffer.from(renderMedia(f.packager.rendition));
      f.rendered = f.packager.version;
    }
  }
}

main();
