import { createServiceRef } from '../../sdk/index.ts';

/*
 * The idp-login plugin's contract for other plugins: a token of an identity provider (Auth0, any
 * OIDC provider with a JWKS) verified for a tenant that is not in the config file (the iam
 * plugin's users name their own tenant).
 */

/** A tenant as a user names it: the provider's domain (or issuer URL) and the API's audience. */
export interface IdpTenantRef {
  domain: string;
  audience: string;
}

export interface IdpVerifier {
  /** Whether `token`'s issuer (read unverified) is the tenant's: only then is `verify` worth asking. */
  issuedBy(token: string, domain: string): boolean;
  /**
   * The token verified against the tenant's JWKS (signature, `kid`, an asymmetric algorithm,
   * issuer, audience, expiry): its subject, or why not.
   */
  verify(token: string, tenant: IdpTenantRef): Promise<{ subject: string } | { reason: string }>;
}

/**
 * Verifies identity-provider tokens for tenants given at the call (provided by idp-login while
 * `api.auth.enable`).
 *
 * @example
 * deps: { idp: optional(idpVerifierRef) }
 */
export const idpVerifierRef = createServiceRef<IdpVerifier>('idp-login.verifier');
