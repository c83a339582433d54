import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { createTestApp, type TestApp } from '@media-core/testkit';

/** This package's folder. */
export const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

/**
 * A folder with `node_modules/http-ts-ingest` linking to this package: what `npm install
 * http-ts-ingest` next to a config file leaves, so the plugin is loaded by its package name.
 */
export async function installedIn(dir: string): Promise<string> {
  await mkdir(join(dir, 'node_modules'), { recursive: true });
  await symlink(PACKAGE_DIR, join(dir, 'node_modules', 'http-ts-ingest'), 'dir');
  return dir;
}

interface Tap { testdir(): string; teardown(fn: () => unknown): void }

/** The app in-process with the plugin (by package name), sessions and metrics. */
export async function startIngest(t: Tap, settings: Record<string, unknown> = {}, extra: unknown[] = [], config: Record<string, unknown> = {}): Promise<TestApp> {
  return createTestApp({
    t,
    baseDir: await installedIn(t.testdir()),
    plugins: ['sessions', 'metrics', { name: 'http-ts-ingest', config: settings }, ...(extra as never[])],
    // loopback clients are counted too, so the test sees its own sessions
    config: { sessions: { ip_ignorelist: [] }, ...config },
  });
}

/** ffmpeg arguments of a light live publisher (tiny test picture, real time) pushing to `url`. */
export function publisherArgs(url: string): string[] {
  return ['-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=15',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '15', '-f', 'mpegts', '-method', 'PUT', url];
}

/** A publisher whose body the test writes chunk by chunk; `done` is the PUT's answer. */
export function publisher(kit: TestApp, url: string) {
  const body = new PassThrough();
  const done = kit.request('PUT', url, { raw: body, headers: { 'content-type': 'video/mp2t' } });
  return { body, done };
}

/** Polls `check` until it returns a value (deadline 20 s). */
export async function until<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
