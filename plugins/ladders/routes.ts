import { Type, type HttpScope } from '../../sdk/index.ts';
import type { FastifyRequest } from 'fastify';
import type { Ladders, MayChange } from './service.ts';
import { IdParams, LadderSettings, LadderView } from './schema.ts';

const TAGS = ['ladders'];
const BASE = '/api/v3/ladders';

/**
 * `/api/v3/ladders`: list, read, create or replace, delete. `mayChange`: whether a request's
 * caller may replace or delete a ladder its maker made then (`httpHooksRef.mayChange`).
 */
export function ladderRoutes(http: HttpScope, ladders: Ladders, mayChange: (req: FastifyRequest) => MayChange): void {
  http.get(BASE, { schema: { summary: 'Every ladder (the config file\'s first)', tags: TAGS, response: { 200: Type.Array(LadderView) } } },
    async () => ladders.list());

  http.get(`${BASE}/:id`, { schema: { summary: 'One ladder and its processes', tags: TAGS, params: IdParams, response: { 200: LadderView } } },
    async (req) => ladders.view(req.params.id));

  http.put(`${BASE}/:id`, {
    schema: { summary: 'Create or replace a ladder (201 new, 200 replaced)', tags: TAGS, params: IdParams, body: LadderSettings, response: { 200: LadderView, 201: LadderView } },
  }, async (req, reply) => {
    const created = await ladders.put(req.params.id, req.body, req.auth?.user, mayChange(req));
    return reply.code(created ? 201 : 200).send(ladders.view(req.params.id));
  });

  http.delete(`${BASE}/:id`, { schema: { summary: 'Delete a ladder and its processes', tags: TAGS, params: IdParams } },
    async (req, reply) => {
      await ladders.delete(req.params.id, mayChange(req));
      return reply.code(204).send();
    });
}
