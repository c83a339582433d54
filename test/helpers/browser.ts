import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's Chromium (installed by scripts/ensure-test-deps.sh); `CHROMIUM` points elsewhere. */
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. */
export function noBrowser(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (Debian package chromium; scripts/ensure-test-deps.sh installs it as root)`;
}

/**
 * Headless Chromium for a test, closed at teardown: loopback ICE candidates allowed, a fake camera
 * and microphone granted without asking, autoplay without a gesture, nothing fetched from the
 * internet (the background-networking flags: this machine's closed network refuses them).
 */
export async function launchChromium(t: { teardown(fn: () => unknown): void }): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic',
      '--allow-loopback-in-peer-connection', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream',
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  // playwright gives the browser a new empty profile and removes it at close
  t.teardown(() => browser.close().catch(() => {}));
  return browser;
}
