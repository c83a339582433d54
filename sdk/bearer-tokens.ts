import type { FastifyRequest } from 'fastify';

/**
 * The `Bearer` credentials of a request, from every Authorization header (node keeps only the
 * first one in `request.headers`; the reference tries each). The scheme matches case-insensitively.
 *
 * @example
 * for (const token of bearerTokens(request)) { ... }
 */
export function bearerTokens(request: FastifyRequest): string[] {
  const raw = request.raw.rawHeaders;
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'authorization') continue;
    const m = /^bearer\s+(\S+)\s*$/i.exec(raw[i + 1]!);
    if (m) out.push(m[1]!);
  }
  return out;
}
