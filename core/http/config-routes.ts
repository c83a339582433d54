import { ApiError, ConfigData, Type, eventsRef, type EventsService, type HttpScope } from '../../sdk/index.ts';
import { ConfigRejected } from '../config/store.ts';
import type { Kernel } from '../kernel/kernel.ts';
import { sendJson } from './json.ts';

const ConfigView = Type.Object({
  config: ConfigData,
  created_at: Type.String(),
  loaded_at: Type.String(),
  updated_at: Type.String(),
  overrides: Type.Array(Type.String()),
});

/** `GET/PUT /api/v3/config` and `GET /api/v3/config/reload`. */
export function configRoutes(k: Kernel) {
  return async (http: HttpScope) => {
    http.get('/api/v3/config', {
      schema: { summary: 'The active configuration', tags: ['v16.7.2'], response: { 200: ConfigView } },
    }, async () => k.configStore.view());

    http.put('/api/v3/config', {
      schema: { summary: 'Store a complete or partial configuration (applied at reload)', tags: ['v16.7.2'] },
    }, async (req, reply) => {
      let body = req.body;
      if (typeof body === 'string' || Buffer.isBuffer(body)) {
        try { body = JSON.parse(body.toString()); } catch (err) {
          throw new ApiError(400, 'Invalid JSON', [(err as Error).message], 'INVALID_JSON');
        }
      }
      try {
        await k.configStore.put(body);
      } catch (err) {
        if (!(err instanceof ConfigRejected)) throw err;
        if (err.status === 400) {
          throw new ApiError(400, 'Invalid JSON', Object.entries(err.errors).map(([key, m]) => `${key}: ${m.join('; ')}`), 'CONFIG_INVALID_TYPE');
        }
        return reply.code(409).send(err.errors);
      }
      // the events plugin, when loaded, tells subscribers (it applies at the next reload)
      (k.services.resolve(eventsRef) as EventsService | undefined)?.emit('config.changed', {});
      return sendJson(reply, 'OK');
    });

    http.get('/api/v3/config/reload', {
      config: { mutates: true },
      schema: { summary: 'Restart the service with the stored configuration', tags: ['v16.7.2'] },
    }, async (_req, reply) => {
      reply.raw.once('finish', () => k.requestReload());
      return sendJson(reply, 'OK');
    });
  };
}
