import type { FastifyReply } from 'fastify';

/**
 * Sends any JSON value as JSON, strings included (fastify would send a bare string as text;
 * clients of datarhei Core parse `"OK"` and string metadata as JSON).
 */
export function sendJson(reply: FastifyReply, value: unknown): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(value === undefined ? null : value));
}
