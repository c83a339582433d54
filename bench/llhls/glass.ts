import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCheckout, startDeployed } from '../process/deployed.ts';
import { freePort, head, opt, ROOT, sleep, TAG, uptime, WRITE } from './common.ts';
import { Child } from '../webrtc/ipc.ts';
import { measureDelay, type DelayResult } from '../webrtc/whep-delay.ts';

/**
 * Glass-to-glass delay of LL-HLS (issue 47.6): the WHEP bench's publisher (`bench/webrtc/whep-publisher.ts`:
 * raw 1280x720 25 fps frames, each with its Date.now() drawn in as a barcode, encoded by ffmpeg with
 * a keyframe a second, published over RTMP) into the service as deployed (`deployed.ts`) with
 * `llhls` on (1 s segments, `--part` ms parts, default 200); headless Chromium plays
 * `/hls/<stream>/index.m3u8` with hls.js (the devDependency, low-latency mode) from a page this
 * bench serves, and reads each presented frame's barcode (`bench/webrtc/whep-delay.ts`): Date.now()
 * minus the stamp, from the publisher drawing the frame to Chromium presenting it, one machine clock.
 * Run: `node bench/llhls/glass.ts [--part 200] [--warm 10] [--window 30] [--write [tag]]`; writes
 * bench/results/llhls-glass-<date>[-tag].md. Aim (issue 47.6): p95 under 1.5 s with 200 ms parts on loopback.
 */

const PART_MS = Number(opt('part', '200'));
const WARM_S = Number(opt('warm', '10'));
const WINDOW_S = Number(opt('window', '30'));
const STREAM = 'live/glass';

/** A page with a muted autoplaying <video> that hls.js (low-latency mode) feeds from `playlist`. */
function playerPage(playlist: string): Promise<{ url: string; server: Server }> {
  const hls = readFileSync(createRequire(import.meta.url).resolve('hls.js/dist/hls.min.js'), 'utf8');
  const html = `<!doctype html><html><body><video muted autoplay playsinline width="1280" height="720"></video>
<script>${hls}</script><script>
const video = document.querySelector('video');
const hls = new Hls({ lowLatencyMode: true });
hls.loadSource(${JSON.stringify(playlist)});
hls.attachMedia(video);
hls.on(Hls.Events.MANIFEST_PARSED, () => video.play().catch(() => {}));
window.hls = hls;
window.whep = {}; // the delay reader asks a WebRTC connection for its stats: none here
</script></body></html>`;
  const server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end(html); });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, server })));
}


async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-llhls-glass-'));
  const rtmp = await freePort();
  const svc = await startDeployed(ROOT, buildCheckout(ROOT), dir, {
    log: { level: 'warn' }, rtmp: { enable: true, address: `127.0.0.1:${rtmp}` }, storage: { disk: { dir: join(dir, 'disk') } },
    llhls: { enable: true, target_duration_seconds: 1, part_target_ms: PART_MS },
  });
  const load0 = uptime();
  const publisher = new Child(fileURLToPath(new URL('../webrtc/whep-publisher.ts', import.meta.url)), [`rtmp://127.0.0.1:${rtmp}/${STREAM}`, 'none']);
  let page: { url: string; server: Server } | undefined;
  try {
    await publisher.next((m) => m.ready === true, 30_000, 'publisher ready');
    const playlist = `${svc.url}/hls/${STREAM}/index.m3u8`;
    for (let i = 0; i < 100 && (await fetch(playlist).then((r) => r.status)) !== 200; i++) await sleep(200);
    page = await playerPage(playlist);
    const d: DelayResult = await measureDelay(`LL-HLS, ${PART_MS} ms parts`, page.url, WARM_S, WINDOW_S);
    const md = [
      `# Glass-to-glass delay of LL-HLS in hls.js (issue 47.6), ${new Date().toISOString()}`, '',
      `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}. Commit: ${head()}.`,
      `uptime before: \`${load0}\`; after: \`${uptime()}\`.`,
      `1280x720 25 fps barcoded frames (bench/webrtc/whep-publisher.ts, no audio), libx264 ultrafast zerolatency, a keyframe a second, RTMP;`,
      `the service as deployed, \`llhls\` with 1 s segments and ${PART_MS} ms parts; hls.js (low-latency mode) in headless Chromium on loopback.`,
      `${WARM_S} s of playing before the ${WINDOW_S} s window.`, '',
      '| parts | frames read | misread | p50 (ms) | p95 (ms) | max (ms) | first frame after page load (ms) |', '|---:|---:|---:|---:|---:|---:|---:|',
      `| ${PART_MS} ms | ${d.frames} | ${d.misreads} | ${Math.round(d.p50)} | ${Math.round(d.p95)} | ${Math.round(d.max)} | ${d.firstFrameMs} |`, '',
      'Aim (issue 47.6): p95 under 1.5 s with 200 ms parts on loopback.', '',
    ].join('\n');
    console.log(md);
    if (WRITE) {
      const file = join(ROOT, 'bench/results', `llhls-glass-${new Date().toISOString().slice(0, 10)}${TAG}.md`);
      await writeFile(file, md);
      console.log(`wrote ${file}`);
    }
  } finally {
    page?.server.close();
    await publisher.stop();
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
