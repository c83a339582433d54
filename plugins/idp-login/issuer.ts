/* A tenant's issuer, without loading jose (the verifier reads it at every login). */

/**
 * The issuer of a tenant: a `domain` with a scheme is the issuer base as is (self-hosted
 * providers, tests), a bare domain means `https://<domain>/` (Auth0).
 */
export function tenantIssuer(domain: string): string {
  const d = domain.trim();
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(d) ? d : `https://${d.replace(/\/+$/, '')}/`;
}

/** Issuers compare without their trailing slash (providers differ in writing it). */
export const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
