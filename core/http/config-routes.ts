import type { TObject } from '@sinclair/typebox';
import { ApiError, Type, eventsRef, type EventsService, type HttpScope } from '../../sdk/index.ts';
import { currentBuild } from '../config/build.ts';
import { ConfigRejected } from '../config/store.ts';
import type { Kernel } from '../kernel/kernel.ts';
import type { FastifyReply } from 'fastify';
import { sendJson } from './json.ts';

const views = new WeakMap<TObject, TObject>();

/**
 * The answer's schema for a build's config: the config without its string formats
 * (`sdk/config/formats.ts`): they are the PUT's checks, not the answer's; the serializer's ajv
 * knows none of them (it would log each as unknown). Made once per build.
 */
function configView(config: TObject): TObject {
  let view = views.get(config);
  if (!view) {
    view = Type.Object({
      config: withoutFormats(config),
      created_at: Type.String(),
      loaded_at: Type.String(),
      updated_at: Type.String(),
      overrides: Type.Array(Type.String()),
    });
    views.set(config, view);
  }
  return view;
}

type View = ReturnType<Kernel['configStore']['view']>;

/** The view's parts by identity: a PUT or a reload replaces them, nothing changes them in place. */
const sameView = (a: View, b: View) => a.config === b.config && a.overrides === b.overrides
  && a.created_at === b.created_at && a.loaded_at === b.loaded_at && a.updated_at === b.updated_at;

function withoutFormats<T>(schema: T): T {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key === 'format' && typeof value === 'string' ? undefined : value))) as T;
}

function sendText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

/** `GET/PUT /api/v3/config` and `GET /api/v3/config/reload`. */
export function configRoutes(k: Kernel) {
  // the config's JSON, made once per change (by the route's schema) instead of per request
  let memo: { view: View; text: string } | undefined;
  return async (http: HttpScope) => {
    http.get('/api/v3/config', {
      schema: { summary: 'The active configuration', tags: ['v16.7.2'], response: { 200: configView(currentBuild().configSchema) } },
    }, async (_req, reply) => {
      const view = k.configStore.view();
      if (!memo || !sameView(memo.view, view)) memo = { view, text: String(reply.serialize(view)) };
      return sendText(reply, memo.text);
    });

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
        const lines = Object.entries(err.errors).map(([key, m]) => `${key}: ${m.join('; ')}`);
        if (err.kind === 'apply') throw new ApiError(400, 'Failed to activate config', lines, 'CONFIG_WOULD_FAIL');
        if (err.status === 400) throw new ApiError(400, 'Invalid JSON', lines, 'CONFIG_INVALID_TYPE');
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
      // a stored config that would not boot is refused here (and put back to the running one), so
      // the client learns why instead of an OK followed by nothing
      const refused = await k.checkReload();
      if (refused) {
        throw new ApiError(400, 'Failed to activate config', Object.entries(refused).map(([key, m]) => `${key}: ${m.join('; ')}`), 'CONFIG_RELOAD_REFUSED');
      }
      reply.raw.once('finish', () => k.requestReload());
      return sendJson(reply, 'OK');
    });
  };
}
