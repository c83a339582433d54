import type { Page } from 'playwright-core';
import { LAYOUT, readStamp, type Layout } from './barcode.ts';
import { quantile, sleep } from './ipc.ts';

/**
 * Glass-to-glass delay of the WHEP bench (`whep.ts`): headless Chromium opens the service's player
 * page; in the page, `video.requestVideoFrameCallback` draws each presented frame's code area to a
 * canvas, reads the barcode (barcode.ts, its source run in the page) and keeps Date.now() minus the
 * stamp: from the publisher drawing the frame to Chromium presenting it, on one machine clock.
 */
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-quic', '--allow-loopback-in-peer-connection', '--autoplay-policy=no-user-gesture-required',
];

export interface DelayResult {
  label: string;
  /** ms from page load to the first presented frame. */
  firstFrameMs: number;
  windowS: number;
  /** Frames read in the window (stamp checked), frames whose code failed the check, presented frames the callbacks skipped. */
  frames: number; misreads: number; skipped: number; duplicates: number;
  p50: number; p95: number; max: number; min: number; mean: number;
  /** The same from `expectedDisplayTime` (when the compositor shows the frame) instead of the callback's Date.now(). */
  displayP50: number; displayP95: number;
  /** From the video inbound-rtp stats over the window: mean jitter buffer delay per frame (ms), decoded, dropped, freezes, lost packets. */
  jitterBufferMs: number; framesDecoded: number; framesDropped: number; freezes: number; packetsLost: number;
  /** The delays of the window, in order (ms). */
  delays: number[];
}

interface PageState { first: number; frames: number; misreads: number; skipped: number; duplicates: number; delays: number[]; display: number[] }
interface VideoStats { jitterBufferDelay: number; jitterBufferEmittedCount: number; framesDecoded: number; framesDropped: number; freezeCount: number; packetsLost: number }

/** In the page: reads every presented frame's stamp; `window.__bench.on` says whether to keep them. */
function collect(l: Layout): void {
  type Meta = { expectedDisplayTime: number; presentedFrames: number };
  const w = window as unknown as { __bench: PageState & { on: boolean }; __readStamp: typeof readStamp };
  const video = document.querySelector('video') as HTMLVideoElement & { requestVideoFrameCallback(cb: (now: number, m: Meta) => void): number };
  const canvas = document.createElement('canvas');
  canvas.width = l.cols * l.block;
  canvas.height = l.rows * l.block;
  const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
  const b: PageState & { on: boolean } = { on: false, first: 0, frames: 0, misreads: 0, skipped: 0, duplicates: 0, delays: [], display: [] };
  w.__bench = b;
  let lastPresented = -1;
  let lastStamp = -1;
  const onFrame = (_now: number, m: Meta): void => {
    const t = Date.now();
    if (!b.first) b.first = t;
    ctx.drawImage(video, l.x, l.y, canvas.width, canvas.height, 0, 0, canvas.width, canvas.height);
    const stamp = w.__readStamp(ctx.getImageData(0, 0, canvas.width, canvas.height).data, canvas.width, l);
    if (b.on) {
      if (lastPresented >= 0 && m.presentedFrames > lastPresented + 1) b.skipped += m.presentedFrames - lastPresented - 1;
      if (stamp < 0) b.misreads++;
      else if (stamp === lastStamp) b.duplicates++;
      else { b.frames++; b.delays.push(t - stamp); b.display.push(performance.timeOrigin + m.expectedDisplayTime - stamp); }
    }
    lastPresented = m.presentedFrames;
    if (stamp >= 0) lastStamp = stamp;
    video.requestVideoFrameCallback(onFrame);
  };
  video.requestVideoFrameCallback(onFrame);
}

function videoStats(page: Page): Promise<VideoStats> {
  return page.evaluate(async () => {
    const pc = (window as unknown as { whep: { pc?: RTCPeerConnection } }).whep.pc;
    const out = { jitterBufferDelay: 0, jitterBufferEmittedCount: 0, framesDecoded: 0, framesDropped: 0, freezeCount: 0, packetsLost: 0 };
    (await pc?.getStats())?.forEach((r: Record<string, unknown>) => {
      if (r.type !== 'inbound-rtp' || r.kind !== 'video') return;
      for (const k of Object.keys(out) as (keyof typeof out)[]) out[k] = Number(r[k] ?? 0);
    });
    return out;
  });
}

async function waitFirstFrame(page: Page, ms: number): Promise<number> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const first = await page.evaluate(() => (window as unknown as { __bench: PageState }).__bench.first);
    if (first) return first;
    await sleep(100);
  }
  throw new Error('Chromium presented no frame in time');
}

/** Delay over `windowS` after `warmS` of playing, in a fresh headless Chromium. */
export async function measureDelay(label: string, pageUrl: string, warmS: number, windowS: number): Promise<DelayResult> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    const loaded = Date.now();
    const res = await page.goto(pageUrl);
    if (res?.status() !== 200) throw new Error(`player page: ${res?.status()}`);
    await page.addScriptTag({ content: `window.__readStamp = ${readStamp.toString()};` });
    await page.evaluate(collect, LAYOUT);
    const first = await waitFirstFrame(page, 30_000);
    await sleep(warmS * 1000);
    const s0 = await videoStats(page);
    await page.evaluate(() => { (window as unknown as { __bench: { on: boolean } }).__bench.on = true; });
    await sleep(windowS * 1000);
    const st = await page.evaluate(() => {
      const b = (window as unknown as { __bench: PageState & { on: boolean } }).__bench;
      b.on = false;
      return b as PageState;
    });
    const s1 = await videoStats(page);
    await page.close({ runBeforeUnload: true }); // the page DELETEs its session
    const d = st.delays;
    const frames = s1.jitterBufferEmittedCount - s0.jitterBufferEmittedCount;
    return {
      label, firstFrameMs: first - loaded, windowS, frames: d.length, misreads: st.misreads, skipped: st.skipped, duplicates: st.duplicates,
      p50: quantile(d, 0.5), p95: quantile(d, 0.95), max: Math.max(...d), min: Math.min(...d), mean: d.reduce((a, b) => a + b, 0) / d.length,
      displayP50: quantile(st.display, 0.5), displayP95: quantile(st.display, 0.95),
      jitterBufferMs: frames > 0 ? ((s1.jitterBufferDelay - s0.jitterBufferDelay) / frames) * 1000 : NaN,
      framesDecoded: s1.framesDecoded - s0.framesDecoded, framesDropped: s1.framesDropped - s0.framesDropped,
      freezes: s1.freezeCount - s0.freezeCount, packetsLost: s1.packetsLost - s0.packetsLost, delays: d,
    };
  } finally {
    await browser.close().catch(() => undefined);
  }
}
