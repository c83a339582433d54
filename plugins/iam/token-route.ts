import { ApiError, Type, type HttpScope } from '../../sdk/index.ts';
import type { Delegation } from './delegate.ts';
import { iamErrors } from './errors.ts';
import { sessionSecrets } from './reads.ts';
import { SessionTokenRequest, UsernameParams } from './schema.ts';
import { MAX_TOKEN_CHARS, signSession, type SessionData } from './session-token.ts';
import type { Users } from './users.ts';

/** A token's life when the request names none (the successor's 0 would end it at once). */
export const DEFAULT_TTL_SECONDS = 3600;

/**
 * `PUT /api/v3/session/token/{username}`, as the successor answers: for each request of the list a
 * session token of that user (reads.ts decides its reads), signed with its first session secret;
 * `""` when it has none. A superuser asks for anyone; another user (through its `api` policies) for
 * itself only.
 */
export function sessionTokenRoute(http: HttpScope, users: Users, d: Delegation): void {
  http.put('/api/v3/session/token/:username', {
    schema: {
      summary: 'Session tokens of a user for the file mounts (`?token=`)', tags: ['iam'], params: UsernameParams,
      body: Type.Array(SessionTokenRequest, { maxItems: 64 }), response: { 200: Type.Array(SessionTokenRequest) },
    },
  }, async (req) => {
    const name = req.params.username;
    const caller = d.delegate(req);
    if (caller && caller.name !== name) throw new ApiError(403, 'Forbidden', [`user ${caller.name} may ask for its own session tokens only`], 'IAM_FORBIDDEN');
    const u = users.stored(name);
    if (!u || u.name === '$anon') throw iamErrors.notFound(name);
    const secret = sessionSecrets(u)[0];
    const now = Math.floor(Date.now() / 1000);
    return (req.body ?? []).map((r) => {
      const data: SessionData = {};
      if (r.match) data.match = r.match;
      if (r.remote?.length) data.remote = r.remote;
      if (r.extra && Object.keys(r.extra).length) data.extra = r.extra;
      const ttl = r.ttl_sec || DEFAULT_TTL_SECONDS;
      const token = secret === undefined ? '' : signSession(secret, u.name, data, ttl, now);
      // a token longer than a reader may send would be refused at every read: refused here instead
      if (token.length > MAX_TOKEN_CHARS) throw iamErrors.invalid('extra', `the token would be over ${MAX_TOKEN_CHARS} characters`);
      return { ...r, ttl_sec: ttl, token };
    });
  });
}
