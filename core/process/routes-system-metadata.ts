import { ApiError, Type, type HttpScope, type StateDocument } from '../../sdk/index.ts';
import type { FastifyReply } from 'fastify';
import { own, type DbData } from './db-document.ts';
import { checkKey } from './safe-names.ts';
import { json as sendRaw } from './routes.ts';
import { AnyJson, metadataBody } from './metadata-body.ts';
import type { MetadataBudget } from './metadata-budget.ts';

const KeyParams = Type.Object({ key: Type.String() });
const TAGS = ['v16.7.2'];
const json = (reply: FastifyReply, v: unknown) => sendRaw(reply, JSON.stringify(v ?? null));

/**
 * Global metadata: `GET/PUT /api/v3/metadata/{key}`. It lives in db.json next to the processes,
 * so the process engine (db.json's owner) serves it; saved even when no process exists.
 */
export function systemMetadataRoutes(http: HttpScope, db: StateDocument<DbData>, storable: (value: unknown) => void, budget?: MetadataBudget): void {
  const system = () => db.data.metadata.system;
  const all = async (_req: unknown, reply: FastifyReply) => json(reply, system());
  http.get('/api/v3/metadata', { schema: { summary: 'All global metadata', tags: TAGS } }, all);
  http.get('/api/v3/metadata/', { schema: { hide: true } }, all);
  http.get('/api/v3/metadata/:key', {
    schema: { summary: 'One global metadata key', tags: TAGS, params: KeyParams },
  }, async (req, reply) => {
    const v = own(system(), req.params.key);
    if (v === undefined) throw new ApiError(404, 'Metadata not found', ['unknown key'], 'METADATA_NOT_FOUND');
    return json(reply, v);
  });
  const put = async (key: string, body: unknown) => {
    if (key === '') throw new ApiError(400, 'Invalid key', ['The key must not be of length 0'], 'METADATA_INVALID_KEY');
    checkKey(key);
    const had = Object.prototype.hasOwnProperty.call(system(), key);
    const before = system()[key];
    // serialised before it is applied: a value db.json cannot hold changes nothing
    // the cheaper check first: a value beyond the limit is refused without being written out
    budget?.checkSystem(key, body);
    if (body !== null) storable(body);
    await db.commit(() => {
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
    schema: { summary: 'Set (or, with null, delete) a global metadata key', tags: TAGS, params: KeyParams, body: AnyJson },
    ...(budget ? { preParsing: budget.admit } : {}),
  }, async (req, reply) => json(reply, await put(req.params.key, metadataBody(req.body))));
  http.put('/api/v3/metadata/', { schema: { hide: true, body: AnyJson } }, async (req, reply) => json(reply, await put('', metadataBody(req.body))));
}
