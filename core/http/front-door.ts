import {
  OPTIONAL_AUTH, PUBLIC, Type, aboutRef, appLogRef, httpHooksRef, loginValidatorsRef, type AboutInfo, type HttpScope, type LoginValidator,
} from '../../sdk/index.ts';
import type { Kernel } from '../kernel/kernel.ts';
import { buildInfo, goArch, loadBuildInfo } from './build-info.ts';

/** The API version clients check: they refuse anything that is not datarhei Core 16.x. */
export const API_VERSION = '16.15.0';

/**
 * `GET /ping`, `GET /api` (About), `GET /api/v3/log`; the last two are also services (`aboutRef`,
 * `appLogRef`) so that other front ends (GraphQL) answer the same.
 */
export function frontDoorRoutes(k: Kernel) {
  const about = () => aboutOf(k);
  // git runs in the background while the service starts; the full About waits for it
  const build = loadBuildInfo();
  k.services.provide(aboutRef, { about });
  k.services.provide(appLogRef, { console: (keep) => k.ring.console(keep), raw: (keep) => k.ring.raw(keep) });
  const sees = k.hooks.get(httpHooksRef).sees;
  return async (http: HttpScope) => {
    http.get('/ping', { config: PUBLIC, schema: { hide: true } }, async (_req, reply) => reply.type('text/plain; charset=utf-8').send('pong'));

    http.get('/api', {
      config: OPTIONAL_AUTH,
      schema: { summary: 'About the service', tags: ['v16.7.2'] },
    }, async (req) => {
      const auths = authDescriptions(k);
      // exactly these three keys without a token (reference 3.5): clients compare the object whole
      if (k.config.api.auth.enable && !req.auth) {
        return { app: 'datarhei-core', auths, version: { number: `${API_VERSION.split('.')[0]}.0.0` } };
      }
      await build;
      return about();
    });

    http.get('/api/v3/log', {
      schema: {
        summary: 'Application log', tags: ['v16.7.2'],
        querystring: Type.Object({ format: Type.Optional(Type.String()) }),
      },
    }, async (req) => {
      // an access plugin's user sees the lines about what it may see (`httpHooksRef.sees`)
      const keep = sees.isUsed() ? (e: Readonly<Record<string, unknown>>) => sees.call(req, { process: str(e.process), stream: str(e.stream) }) !== false : undefined;
      return req.query.format === 'raw' ? k.ring.raw(keep) : k.ring.console(keep);
    });
  };
}

/** The full About (reference 5.1). */
function aboutOf(k: Kernel): AboutInfo {
  const b = buildInfo();
  return {
    app: 'datarhei-core',
    auths: authDescriptions(k),
    name: k.config.name,
    id: k.config.id,
    created_at: new Date(k.server.startedAt).toISOString().replace(/\.\d+Z$/, 'Z'),
    uptime_seconds: Math.floor((Date.now() - k.server.startedAt) / 1000),
    version: {
      number: API_VERSION,
      repository_commit: b.commit,
      repository_branch: b.branch,
      build_date: b.date,
      arch: goArch(),
      compiler: `node ${process.version}`,
    },
  };
}

/** The `auths` list of About: the local login, then each login validator a plugin provides. */
function authDescriptions(k: Kernel): string[] {
  if (!k.config.api.auth.enable) return [];
  const validators = k.services.resolve(loginValidatorsRef) as readonly LoginValidator[];
  return ['localjwt', ...validators.map((v) => v.name)];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
