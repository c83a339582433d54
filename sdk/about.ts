import { createServiceRef } from './refs.ts';

/*
 * What the core's own routes `GET /api` and `GET /api/v3/log` answer, as services, so other
 * front ends (the GraphQL plugin) show the same facts without rebuilding them.
 */

/** Build identity (reference 5.1 `Version`). */
export interface AboutVersion {
  number: string;
  repository_commit: string;
  repository_branch: string;
  build_date: string;
  /** `<os>/<arch>` as Go spells it, e.g. `linux/amd64`. */
  arch: string;
  compiler: string;
}

/** The full About of an authenticated `GET /api` (reference 5.1). */
export interface AboutInfo {
  app: string;
  /** Login methods (reference 3.5); empty when auth is off. */
  auths: string[];
  name: string;
  id: string;
  /** RFC 3339, seconds precision: when this app was built (start or reload). */
  created_at: string;
  uptime_seconds: number;
  version: AboutVersion;
}

/**
 * The service behind `GET /api` (provided by the core).
 *
 * @example
 * deps: { about: aboutRef },
 * setup(ctx) { ctx.log.info({ version: ctx.deps.about.about().version.number }, 'hello'); }
 */
export interface AboutService {
  about(): AboutInfo;
}

/**
 * Where the core provides its About service.
 *
 * @example
 * deps: { about: aboutRef } // ctx.deps.about.about().uptime_seconds
 */
export const aboutRef = createServiceRef<AboutService>('core.about');

/**
 * The application log as `GET /api/v3/log` shows it (provided by the core): the latest
 * `log.max_lines` events at or above `log.level`, oldest first.
 *
 * @example
 * deps: { log: appLogRef },
 * setup(ctx) { ctx.http.get('/api/v3/vendor/log', async () => ctx.deps.log.console().slice(-10)); }
 */
export interface AppLogService {
  /** Console-formatted lines (reference 12.6), as `?format=console` (the default); `keep` picks events (their logged fields). */
  console(keep?: (event: Readonly<Record<string, unknown>>) => boolean): string[];
  /** The events as objects (reference 5.17 `LogEvent`), as `?format=raw`; `keep` as for `console`. */
  raw(keep?: (event: Readonly<Record<string, unknown>>) => boolean): Record<string, unknown>[];
}

/**
 * Where the core provides the application log.
 *
 * @example
 * deps: { log: appLogRef } // ctx.deps.log.console()
 */
export const appLogRef = createServiceRef<AppLogService>('core.log');
