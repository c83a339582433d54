import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, noBrowser } from '../../helpers/browser.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * hls.js (a devDependency, its browser build read from node_modules) in a page of Chromium: a muted
 * <video> fed by hls.js in low-latency mode, what the page saw (frames, time, latency, stalls,
 * errors) read back on demand, and every playlist and part request Chromium made recorded.
 */

/** The browser build of hls.js, resolved like any package (its `./dist/*` export). */
export function hlsjsSource(): string {
  return readFileSync(createRequire(import.meta.url).resolve('hls.js/dist/hls.min.js'), 'utf8');
}

/** What the page reports about playback. */
export interface PlayStats {
  /** `getVideoPlaybackQuality().totalVideoFrames` */
  frames: number;
  dropped: number;
  currentTime: number;
  /** hls.js's estimate of the distance to the live edge, seconds (`hls.latency`), 0 before it knows */
  latency: number;
  /** hls.js's target latency (`hls.targetLatency`), seconds */
  targetLatency: number;
  /** `waiting` events after the first `playing`: the video ran out of data */
  stalls: number;
  playing: boolean;
  /** every hls.js error event, fatal or not */
  errors: { fatal: boolean; type: string; details: string }[];
  /** the picture's height now (`video.videoHeight`) */
  height: number;
  /** the heights of the levels hls.js switched to, in order (`LEVEL_SWITCHED`) */
  switches: number[];
}

/** One playlist answer Chromium got. */
export interface PlaylistAnswer { url: string; status: number; body: string }

export interface HlsPage {
  page: Page;
  stats(): Promise<PlayStats>;
  /** the playlist answers received so far (bodies read as they finished) */
  playlists(): Promise<PlaylistAnswer[]>;
  /** every URL Chromium asked the service for */
  requests: string[];
}

/** What hls.js must support here: MSE with H.264 High and AAC-LC, as the packager's init says. */
export async function mseSupport(page: Page): Promise<Record<string, boolean>> {
  return page.evaluate(() => {
    const types = ['video/mp4; codecs="avc1.64001f"', 'video/mp4; codecs="avc1.42e01e"', 'audio/mp4; codecs="mp4a.40.2"'];
    return Object.fromEntries(types.map((type) => [type, typeof MediaSource !== 'undefined' && MediaSource.isTypeSupported(type)]));
  });
}

/** A page of the service at `origin` (same origin as the playlist: no CORS in the way) with hls.js loaded. */
export async function hlsPage(browser: Browser, origin: string): Promise<HlsPage> {
  const page = await browser.newPage();
  const requests: string[] = [];
  const answers: Promise<PlaylistAnswer | undefined>[] = [];
  page.on('request', (r) => { requests.push(r.url()); });
  page.on('response', (r) => {
    if (!new URL(r.url()).pathname.endsWith('.m3u8')) return;
    answers.push(r.text().then((body) => ({ url: r.url(), status: r.status(), body }), () => undefined));
  });
  await page.goto(`${origin}/ping`);
  await page.addScriptTag({ content: hlsjsSource() });
  const playlists = async () => (await Promise.all(answers)).filter((a): a is PlaylistAnswer => a !== undefined);
  return { page, requests, playlists, stats: () => page.evaluate(() => (window as unknown as { stats(): PlayStats }).stats()) };
}

/** Starts hls.js (low-latency mode) on `url` in a muted, autoplaying <video>; false when MSE is missing. */
export async function startHls(page: Page, url: string, config: Record<string, unknown> = {}): Promise<boolean> {
  return page.evaluate(([url, config]) => {
    interface HlsLike {
      latency: number; targetLatency: number | null; levels: { height: number }[];
      on(event: string, fn: (event: string, data: { fatal: boolean; type: string; details: string; level: number }) => void): void;
      loadSource(url: string): void; attachMedia(video: HTMLVideoElement): void;
    }
    interface HlsClass { new (config: Record<string, unknown>): HlsLike; isSupported(): boolean; Events: Record<string, string> }
    const Hls = (window as unknown as { Hls: HlsClass }).Hls;
    if (!Hls.isSupported()) return false;
    const video = document.createElement('video');
    video.muted = true;
    video.autoplay = true;
    document.body.append(video);
    const hls = new Hls({ lowLatencyMode: true, enableWorker: true, ...config });
    const errors: PlayStats['errors'] = [];
    let playing = false;
    let stalls = 0;
    const switches: number[] = [];
    hls.on(Hls.Events.ERROR!, (_e, d) => { errors.push({ fatal: d.fatal, type: d.type, details: d.details }); });
    hls.on(Hls.Events.LEVEL_SWITCHED!, (_e, d) => { switches.push(hls.levels[d.level]?.height ?? -1); });
    hls.on(Hls.Events.MANIFEST_PARSED!, () => { void video.play().catch(() => {}); });
    video.addEventListener('playing', () => { playing = true; });
    video.addEventListener('waiting', () => { if (playing) stalls++; });
    hls.loadSource(url);
    hls.attachMedia(video);
    (window as unknown as { stats(): PlayStats }).stats = () => {
      const q = video.getVideoPlaybackQuality();
      return {
        frames: q.totalVideoFrames, dropped: q.droppedVideoFrames, currentTime: video.currentTime,
        latency: hls.latency, targetLatency: hls.targetLatency ?? 0, stalls, playing, errors,
        height: video.videoHeight, switches: [...switches],
      };
    };
    return true;
  }, [url, config] as const);
}

/**
 * hls.js (not in low-latency mode) at the start of a DVR playlist, until it played past `past`
 * seconds with hls.js's latency known (or failed: no fatal error is asserted); what it saw then.
 * Undefined without Chromium.
 */
export async function playDvrFromStart(t: { ok(v: unknown, m: string): void; same(a: unknown, b: unknown, m: string): void; teardown(fn: () => unknown): void },
  base: string, url: string, past: number): Promise<PlayStats | undefined> {
  if (noBrowser()) return undefined;
  const hp = await hlsPage(await launchChromium(t), base);
  t.teardown(() => hp.page.close().catch(() => {}));
  t.ok(await startHls(hp.page, url, { lowLatencyMode: false, startPosition: 0 }), 'hls.js (MSE)');
  const s = await waitFor(async () => {
    const st = await hp.stats();
    return st.errors.some((e) => e.fatal) || (st.currentTime > past && st.latency > 0) ? st : undefined;
  }, { timeout: 40_000, what: `hls.js past ${past} s of the DVR window` }).catch(async (err: Error) => { throw new Error(`${err.message} (${JSON.stringify(await hp.stats())})`); });
  t.same(s.errors.filter((e) => e.fatal), [], `no fatal error (${hp.requests.map((u) => u.slice(-40)).join(' ')})`);
  return s;
}
