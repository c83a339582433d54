import { PUBLIC, type HttpScope } from '../../sdk/index.ts';
import { fileRedirects, staticMounts, type RouterConfig } from './router-config.ts';
import { staticDirHandler } from './static-dir.ts';

/**
 * The file routes answer 301 before routing (the reference's redirect middleware), so they win
 * over any route. Installed on the root instance, and only when there are some: one Map lookup.
 */
export function installRedirects(http: HttpScope, router: RouterConfig): void {
  const redirects = fileRedirects(router);
  if (redirects.size === 0) return;
  http.addHook('onRequest', async (request, reply) => {
    const q = request.url.indexOf('?');
    const to = redirects.get(q < 0 ? request.url : request.url.slice(0, q));
    if (to !== undefined) return reply.redirect(to, 301);
  });
}

/** `/ui` and the directory routes: the exact prefix → 301 to `prefix/`, files below it. Public, like the reference. */
export function routerRoutes(router: RouterConfig) {
  return async (http: HttpScope) => {
    for (const m of staticMounts(router)) {
      http.get(m.prefix, { config: PUBLIC, schema: { hide: true } }, async (_req, reply) => reply.redirect(`${m.prefix}/`, 301));
      http.get(`${m.prefix}/*`, { config: PUBLIC, schema: { hide: true } }, staticDirHandler(m));
    }
  };
}
