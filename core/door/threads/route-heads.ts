import type { HttpScope } from '../../../sdk/http.ts';

/** The first segment of a path (`/api/v3/x` → `api`), `:` for a parameter, `` for `/` itself. */
function head(url: string): string {
  const s = url.replace(/^\/+/, '');
  const end = s.indexOf('/');
  const first = end < 0 ? s : s.slice(0, end);
  return first.startsWith(':') ? ':' : first;
}

/**
 * Collects the first path segments of every GET route the app registers (an `onRoute` hook on
 * the root, installed before any plugin) and of the redirects `from` paths: a serving thread
 * answering a catch-all mount (disk `/*`) leaves those to main, where the router prefers the
 * specific route. The catch-all's own `*` is no head.
 */
export function trackRouteHeads(http: HttpScope, redirects: Iterable<string>): () => readonly string[] {
  const heads = new Set<string>();
  for (const from of redirects) heads.add(head(from));
  http.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => m === 'GET' || m === 'HEAD')) return;
    const h = head(route.url);
    if (h !== '*' && h !== '') heads.add(h);
  });
  return () => [...heads];
}
