import { posix } from 'node:path';
import type { ConfigData } from '../config/config-data.ts';

/* The `router.*` keys read as routes (reference 11.8); pure, shared by the config check and the routes. */

export type RouterConfig = ConfigData['router'];

/** The directory routes of `router.*` (reference 11.8): `/ui` for `ui_path`, then every `from/*` key. */
export function staticMounts(router: RouterConfig): { prefix: string; root: string; spa: boolean }[] {
  const mounts = router.ui_path ? [{ prefix: '/ui', root: router.ui_path, spa: true }] : [];
  for (const [from, to] of Object.entries(router.routes)) {
    if (from.endsWith('/*')) mounts.push({ prefix: from.slice(0, -2), root: to, spa: false });
  }
  return mounts;
}

/** The file routes of `router.routes`: exact path → cleaned target, only targets starting with `/`. */
export function fileRedirects(router: RouterConfig): Map<string, string> {
  const out = new Map<string, string>();
  for (const [from, to] of Object.entries(router.routes)) {
    if (from.endsWith('/*') || !to.startsWith('/')) continue;
    out.set(from, posix.normalize(to));
  }
  return out;
}

/** Prefixes `router.routes` keys may not start with: `router.blocked_prefixes`, plus `/ui` when a UI is served. */
export function blockedPrefixes(router: RouterConfig): string[] {
  return router.ui_path ? [...router.blocked_prefixes, '/ui'] : router.blocked_prefixes;
}
