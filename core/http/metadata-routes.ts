import { ApiError, Type, type HttpScope } from '../../sdk/index.ts';
import type { FastifyReply } from 'fastify';
import type { Kernel } from '../kernel/kernel.ts';
import { own } from '../store/db.ts';
import { checkKey } from './safe-names.ts';
import { sendJson } from './json.ts';

const KeyParams = Type.Object({ key: Type.String() });

/** Global metadata: `GET/PUT /api/v3/metadata/{key}`; stored in db.json even with no process. */
export function metadataRoutes(k: Kernel) {
  return async (http: HttpScope) => {
    const system = () => k.db.data.metadata.system;
    const all = async (_req: unknown, reply: FastifyReply) => sendJson(reply, system());
    http.get('/api/v3/metadata', { schema: { summary: 'All global metadata', tags: ['v16.7.2'] } }, all);
    http.get('/api/v3/metadata/', { schema: { hide: true } }, all);
    http.get('/api/v3/metadata/:key', {
      schema: { summary: 'One global metadata key', tags: ['v16.7.2'], params: KeyParams },
    }, async (req, reply) => {
      const v = own(system(), req.params.key);
      if (v === undefined) throw new ApiError(404, 'Metadata not found', ['unknown key'], 'METADATA_NOT_FOUND');
      return sendJson(reply, v);
    });
    const put = async (key: string, body: unknown) => {
      if (key === '') throw new ApiError(400, 'Invalid key', ['The key must not be of length 0'], 'METADATA_INVALID_KEY');
      checkKey(key);
      const had = Object.prototype.hasOwnProperty.call(system(), key);
      const before = system()[key];
      // serialised before it is applied: a value db.json cannot hold changes nothing
      if (body !== null) k.db.storable(body);
      await k.db.commit(() => {
        if (body === null) delete system()[key];
        else system()[key] = body;
        return () => {
          if (had) system()[key] = before;
          else delete system()[key];
        };
      });
      return body;
    };
    http.put('/api/v3/metadata/:key', {
      schema: { summary: 'Set (or, with null, delete) a global metadata key', tags: ['v16.7.2'], params: KeyParams },
    }, async (req, reply) => sendJson(reply, await put(req.params.key, req.body ?? null)));
    http.put('/api/v3/metadata/', { schema: { hide: true } }, async (req, reply) => sendJson(reply, await put('', req.body)));
  };
}
