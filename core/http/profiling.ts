import { Session } from 'node:inspector/promises';
import { ApiError, Type, type HttpScope } from '../../sdk/index.ts';

/** Longest CPU profile: long enough to catch a load pattern, short enough not to pin the loop. */
export const PROFILE_MAX_SECONDS = 30;

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Profiling</title></head><body>
<h1>Profiling</h1>
<ul>
<li><a href="/profiling/cpu?seconds=10">CPU profile, 10 s</a> (open in Chrome DevTools, Performance tab;
at most ${PROFILE_MAX_SECONDS} s, one at a time)</li>
</ul></body></html>`;

/**
 * `/profiling`: only mounted when `debug.profiling` is on (otherwise it is a 404). Unlike the
 * reference (Go's net/http/pprof: heap, goroutines, CPU, traces, behind the IP lists only), the
 * routes need an API token, and there is no heap snapshot: it holds every secret in clear text
 * (API and filesystem passwords, tokens). One CPU profile runs at a time (409 while busy), capped
 * at PROFILE_MAX_SECONDS, so parallel requests cannot stall the service.
 */
export function profilingRoutes() {
  return async (http: HttpScope): Promise<void> => {
    let busy = false;
    http.get('/profiling', { schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
    http.get('/profiling/cpu', {
      schema: { hide: true, querystring: Type.Object({ seconds: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })) }) },
    }, async (req, reply) => {
      if (busy) throw new ApiError(409, 'Conflict', ['a CPU profile is already running; try again when it is done'], 'PROFILE_BUSY');
      busy = true;
      const seconds = Math.min(PROFILE_MAX_SECONDS, Math.max(1, Number(req.query.seconds ?? 10)));
      const session = new Session();
      session.connect();
      try {
        await session.post('Profiler.enable');
        await session.post('Profiler.start');
        await new Promise((r) => setTimeout(r, seconds * 1000));
        const { profile } = await session.post('Profiler.stop');
        reply.header('content-disposition', `attachment; filename="core-${Date.now()}.cpuprofile"`);
        return reply.type('application/json').send(JSON.stringify(profile));
      } finally {
        session.disconnect();
        busy = false;
      }
    });
  };
}
