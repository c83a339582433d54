import type { FastifyReply, FastifyRequest } from 'fastify';

const METHODS = 'GET, HEAD, PUT, POST, DELETE, PATCH';
const HEADERS = 'Origin, Content-Length, Content-Type, Authorization';

/**
 * Whether `s` matches the pattern whose parts around its `*`s are `parts`: the first at the start,
 * the last at the end, the others in order between (leftmost first, which is enough for `*`). One
 * pass; the RegExp of `.*` between the parts took 3.7 s on a 60 KB Origin against `https://*.*.example.com`.
 */
function wildcardMatch(parts: readonly string[], s: string): boolean {
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (s.length < first.length + last.length || !s.startsWith(first) || !s.endsWith(last)) return false;
  let at = first.length;
  const end = s.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = s.indexOf(parts[i]!, at);
    if (found < 0 || found + parts[i]!.length > end) return false;
    at = found + parts[i]!.length;
  }
  return true;
}

/**
 * CORS as the reference's filesystem mounts answer it (section 11.7): `Vary: Origin` always; an
 * allowed `Origin` gets `Access-Control-Allow-Origin` (`*` when the list holds `*`, else the
 * origin) and credentials; preflights (`OPTIONS`) are 204 with methods, headers and max age.
 * Patterns may hold `*` (e.g. `https://*.example.com`).
 *
 * @example
 * const cors = new CorsPolicy(ctx.sections.storage.cors.origins);
 * ctx.http.options('/memfs/*', { config: PUBLIC }, (req, reply) => cors.preflight(req, reply));
 */
export class CorsPolicy {
  readonly #any: boolean;
  readonly #exact: Set<string>;
  readonly #patterns: string[][];

  constructor(origins: readonly string[]) {
    this.#any = origins.includes('*');
    this.#exact = new Set(origins.filter((o) => !o.includes('*')));
    this.#patterns = origins.filter((o) => o !== '*' && o.includes('*')).map((o) => o.toLowerCase().split('*'));
  }

  /** The `Access-Control-Allow-Origin` value for an origin, or undefined when it is not allowed. */
  allow(origin: string): string | undefined {
    if (this.#any) return '*';
    if (this.#exact.has(origin) || this.#patterns.some((p) => wildcardMatch(p, origin.toLowerCase()))) return origin;
    return undefined;
  }

  /** Adds the headers of a simple (non-preflight) response. Cheap when there is no Origin. */
  apply(request: FastifyRequest, reply: FastifyReply): void {
    reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    if (origin === undefined) return;
    const allowed = this.allow(origin);
    if (allowed === undefined) return;
    reply.header('access-control-allow-origin', allowed);
    reply.header('access-control-allow-credentials', 'true');
    reply.header('access-control-expose-headers', 'Content-Length');
  }

  /** Answers an `OPTIONS` request: always 204, with the preflight headers when the origin is allowed. */
  preflight(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    reply.header('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    const origin = request.headers.origin;
    const allowed = origin === undefined ? undefined : this.allow(origin);
    if (allowed !== undefined) {
      reply.header('access-control-allow-origin', allowed);
      reply.header('access-control-allow-credentials', 'true');
      reply.header('access-control-allow-methods', METHODS);
      reply.header('access-control-allow-headers', HEADERS);
      reply.header('access-control-max-age', '86400');
    }
    return reply.code(204).send();
  }
}
