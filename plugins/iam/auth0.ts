import type { FastifyRequest } from 'fastify';
import { bearerTokens, type LoginValidator, type LoginVerdict } from '../../sdk/index.ts';
import type { IdpTenantRef, IdpVerifier } from '../idp-login/api.ts';
import { IAM_SUBJECT } from './api.ts';
import { ANON } from './schema.ts';
import type { Users } from './users.ts';

/*
 * A user's login with its identity provider (the successor's `auth.api.auth0`): `POST /api/login`
 * with `Authorization: Bearer <the provider's token>`. A user with `auth0.enable` names its
 * tenant (`domain`, `audience`) and its subject there (`user`, e.g. `auth0|5f1c...`); a token
 * whose issuer is that tenant's is verified by the idp-login plugin (its JWKS, signature,
 * audience, expiry) and logs in the user whose `user` is the token's subject, as `iam:<name>`.
 * Tokens of no user's tenant are left to the other validators.
 */

export function auth0Login(users: Users, idp: IdpVerifier): LoginValidator {
  return {
    name: 'iam users (auth0)',
    async check(request: FastifyRequest): Promise<LoginVerdict | undefined> {
      for (const token of bearerTokens(request)) {
        // the token's issuer read once per tenant domain, not once per user
        const issued = new Map<string, boolean>();
        const by = (domain: string) => issued.get(domain) ?? (issued.set(domain, idp.issuedBy(token, domain)).get(domain)!);
        const named = users.all().filter((u) => u.name !== ANON && u.auth.api.auth0.enable && u.auth.api.auth0.user !== '' && by(u.auth.api.auth0.tenant.domain));
        if (named.length === 0) continue;
        // one verification per tenant the token may be of (users share tenants)
        const tenants = new Map<string, IdpTenantRef>();
        for (const u of named) {
          const { domain, audience } = u.auth.api.auth0.tenant;
          tenants.set(`${domain}\n${audience}`, { domain, audience });
        }
        let reason = 'no user of this identity';
        for (const [key, tenant] of tenants) {
          const v = await idp.verify(token, tenant);
          if ('reason' in v) {
            reason = v.reason;
            continue;
          }
          const u = named.find((x) => `${x.auth.api.auth0.tenant.domain}\n${x.auth.api.auth0.tenant.audience}` === key && x.auth.api.auth0.user === v.subject);
          // the user may be gone or changed while the keys were fetched
          if (u && users.stored(u.name)?.auth.api.auth0.enable) return { subject: `${IAM_SUBJECT}${u.name}` };
        }
        return { reason };
      }
      return undefined;
    },
  };
}
