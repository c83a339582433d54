import type { HttpScope } from '../../sdk/index.ts';
import { AnyJson, metadataBody } from './metadata-body.ts';
import { processErrors } from './errors.ts';
import type { ProcessManager } from './manager.ts';
import { IdKeyParams, IdParams } from './schema.ts';
import { json as sendJson } from './routes.ts';
import type { FastifyReply } from 'fastify';
import { checkKey } from './safe-names.ts';
import { own } from './db-document.ts';
import type { MetadataBudget } from './metadata-budget.ts';

/** Any JSON value, strings and null included (fastify would send a bare string as text). */
const json = (reply: FastifyReply, v: unknown) => sendJson(reply, JSON.stringify(v ?? null));

const TAGS = ['v16.7.2'];

/** Per-process metadata (reference 4.4.11): any JSON per key; `null` removes the key. */
export function metadataRoutes(http: HttpScope, m: ProcessManager, budget?: MetadataBudget): void {
  const all = (id: string) => {
    if (!m.get(id)) throw processErrors.notFound();
    return m.metadata(id);
  };
  const put = async (id: string, key: string, value: unknown) => {
    if (key === '') throw processErrors.invalidKey();
    checkKey(key);
    await m.setMetadata(id, key, value);
    return value;
  };

  // An empty key returns all metadata (interface), with or without the trailing slash.
  http.get('/api/v3/process/:id/metadata', {
    schema: { summary: 'All metadata of a process', tags: TAGS, params: IdParams },
  }, async (req, reply) => json(reply, all(req.params.id)));
  http.get('/api/v3/process/:id/metadata/', { schema: { hide: true, params: IdParams } },
    async (req, reply) => json(reply, all(req.params.id)));

  http.get('/api/v3/process/:id/metadata/:key', {
    schema: { summary: 'One metadata key of a process', tags: TAGS, params: IdKeyParams },
  }, async (req, reply) => {
    const v = own(all(req.params.id), req.params.key);
    if (v === undefined) throw processErrors.unknownKey();
    return json(reply, v);
  });

  http.put('/api/v3/process/:id/metadata/:key', {
    schema: { summary: 'Set (or, with null, remove) a metadata key of a process', tags: TAGS, params: IdKeyParams, body: AnyJson },
    ...(budget ? { preParsing: budget.admit } : {}),
  }, async (req, reply) => json(reply, await put(req.params.id, req.params.key, metadataBody(req.body))));
  http.put('/api/v3/process/:id/metadata/', { schema: { hide: true, params: IdParams, body: AnyJson } },
    async (req, reply) => json(reply, await put(req.params.id, '', metadataBody(req.body))));
}
