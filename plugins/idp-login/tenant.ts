import type { FastifyRequest } from 'fastify';
import {
  createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify,
  type JWTVerifyGetKey,
} from 'jose';
import { bearerTokens, type IdpTenant, type LoginValidator, type LoginVerdict } from '../../sdk/index.ts';
import { sameIssuer, tenantIssuer } from './issuer.ts';


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
    this.#jwks = tenantKeys(this.#issuer, opts);
  }

  get issuer(): string {
    return this.#issuer;
  }

  async check(request: FastifyRequest): Promise<LoginVerdict | undefined> {
    for (const token of bearerTokens(request)) {
      if (!tokenIssuedBy(token, this.#issuer)) continue;
      return this.#verify(token);
    }
    return undefined;
  }


  async #verify(token: string): Promise<LoginVerdict> {
    const v = await verifyToken(token, this.#jwks, this.#issuer, this.#tenant.audience);
    if ('reason' in v) return v;
    if (!this.#tenant.users.includes(v.subject)) return { reason: `user ${v.subject} is not allowed` };
    return v;
  }
}

/** Whether `token`'s unverified `iss` is `issuer`. */
export function tokenIssuedBy(token: string, issuer: string): boolean {
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' && sameIssuer(iss, issuer);
  } catch {
    return false;
  }
}

/** `token` verified against a tenant's keys: `kid`, algorithm, signature, `exp`, issuer, audience; its subject or why not. */
export async function verifyToken(token: string, jwks: JWTVerifyGetKey, issuer: string, audience: string): Promise<{ subject: string } | { reason: string }> {
  try {
    if (!decodeProtectedHeader(token).kid) return { reason: 'the token has no key id (kid)' };
    const { payload } = await jwtVerify(token, jwks, { algorithms: ALGORITHMS, audience: audience || undefined, requiredClaims: ['exp', 'sub'] });
    if (typeof payload.iss !== 'string' || !sameIssuer(payload.iss, issuer)) return { reason: 'wrong issuer' };
    return { subject: payload.sub! };
  } catch (err) {
    return { reason: describe(err) };
  }
}

/** A tenant's key set, fetched lazily from `<issuer>/.well-known/jwks.json`. */
export function tenantKeys(issuer: string, opts: TenantOptions = {}): JWTVerifyGetKey {
  const base = issuer.endsWith('/') ? issuer : `${issuer}/`;
  return createRemoteJWKSet(new URL('.well-known/jwks.json', base), {
    timeoutDuration: opts.timeoutMs ?? 5000,
    cacheMaxAge: opts.cacheMaxAgeMs ?? 10 * 60_000,
    cooldownDuration: opts.cooldownMs ?? 30_000,
  });
}

function describe(err: unknown): string {
  if (err instanceof joseErrors.JWKSTimeout) return 'the identity provider did not answer in time';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the identity provider matches the token';
  if (err instanceof joseErrors.JOSEError) return err.message;
  return `cannot verify the token: ${(err as Error).message}`;
}

