import type { FastifyRequest } from 'fastify';
import {
  createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify,
  type JWTVerifyGetKey,
} from 'jose';
import { bearerTokens, type IdpTenant, type LoginValidator, type LoginVerdict } from '../../sdk/index.ts';

/** Signature algorithms a tenant may use: asymmetric only (no `none`, no HMAC with a public key). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export interface TenantOptions {
  /** JWKS fetch timeout. */
  timeoutMs?: number;
  /** How long fetched keys are kept; an unknown `kid` refetches sooner (after the cooldown). */
  cacheMaxAgeMs?: number;
  cooldownMs?: number;
}

/**
 * The issuer of a tenant: a `domain` with a scheme is the issuer base as is (self-hosted
 * providers, tests), a bare domain means `https://<domain>/` (Auth0).
 */
export function tenantIssuer(domain: string): string {
  const d = domain.trim();
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(d) ? d : `https://${d.replace(/\/+$/, '')}/`;
}

/** Issuers compare without their trailing slash (providers differ in writing it). */
const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/**
 * One identity-provider tenant as a login validator. It recognises a Bearer token whose
 * (unverified) `iss` is the tenant's, then verifies it against the tenant's JWKS: signature,
 * `kid` present and known, `alg` allowed and matching the key, issuer, audience, expiry; the
 * subject must be one of the tenant's `users`.
 */
export class TenantValidator implements LoginValidator {
  readonly name: string;
  readonly #tenant: IdpTenant;
  readonly #issuer: string;
  readonly #jwks: JWTVerifyGetKey;

  constructor(tenant: IdpTenant, opts: TenantOptions = {}) {
    this.#tenant = tenant;
    this.#issuer = tenantIssuer(tenant.domain);
    this.name = `auth0 domain=${tenant.domain} audience=${tenant.audience} clientid=${tenant.clientid}`;
    const base = this.#issuer.endsWith('/') ? this.#issuer : `${this.#issuer}/`;
    this.#jwks = createRemoteJWKSet(new URL('.well-known/jwks.json', base), {
      timeoutDuration: opts.timeoutMs ?? 5000,
      cacheMaxAge: opts.cacheMaxAgeMs ?? 10 * 60_000,
      cooldownDuration: opts.cooldownMs ?? 30_000,
    });
  }

  get issuer(): string {
    return this.#issuer;
  }

  async check(request: FastifyRequest): Promise<LoginVerdict | undefined> {
    for (const token of bearerTokens(request)) {
      if (!this.#recognises(token)) continue;
      return this.#verify(token);
    }
    return undefined;
  }

  #recognises(token: string): boolean {
    try {
      const iss = decodeJwt(token).iss;
      return typeof iss === 'string' && sameIssuer(iss, this.#issuer);
    } catch {
      return false;
    }
  }

  async #verify(token: string): Promise<LoginVerdict> {
    try {
      if (!decodeProtectedHeader(token).kid) return { reason: 'the token has no key id (kid)' };
      const { payload } = await jwtVerify(token, this.#jwks, {
        algorithms: ALGORITHMS,
        audience: this.#tenant.audience || undefined,
        requiredClaims: ['exp', 'sub'],
      });
      if (typeof payload.iss !== 'string' || !sameIssuer(payload.iss, this.#issuer)) return { reason: 'wrong issuer' };
      const sub = payload.sub!;
      if (!this.#tenant.users.includes(sub)) return { reason: `user ${sub} is not allowed` };
      return { subject: sub };
    } catch (err) {
      return { reason: describe(err) };
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof joseErrors.JWKSTimeout) return 'the identity provider did not answer in time';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the identity provider matches the token';
  if (err instanceof joseErrors.JOSEError) return err.message;
  return `cannot verify the token: ${(err as Error).message}`;
}
