import { getHeapSnapshot } from 'node:v8';
import { Session } from 'node:inspector/promises';
import { NETWORK, Type, type HttpScope } from '../../sdk/index.ts';

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Profiling</title></head><body>
<h1>Profiling</h1>
<ul>
<li><a href="/profiling/heap">Heap snapshot</a> (open in Chrome DevTools, Memory tab)</li>
<li><a href="/profiling/cpu?seconds=10">CPU profile, 10 s</a> (open in Chrome DevTools, Performance tab)</li>
</ul></body></html>`;

/** `/profiling`: only mounted when `debug.profiling` is on (otherwise it is a 404). */
export async function profilingRoutes(http: HttpScope): Promise<void> {
  http.get('/profiling', { config: NETWORK, schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  http.get('/profiling/heap', { config: NETWORK, schema: { hide: true } }, async (_req, reply) => {
    reply.header('content-disposition', `attachment; filename="core-${Date.now()}.heapsnapshot"`);
    return reply.type('application/json').send(getHeapSnapshot());
  });
  http.get('/profiling/cpu', {
    config: NETWORK,
    schema: { hide: true, querystring: Type.Object({ seconds: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })) }) },
  }, async (req, reply) => {
    const seconds = Math.min(120, Math.max(1, Number(req.query.seconds ?? 10)));
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
    }
  });
}
