/* A tenant's issuer, without loading jose (the verifier reads it at every login). */

/**
 * The issuer of a tenant: a `domain` with a scheme is the issuer base as is (self-hosted
 * providers, tests), a bare domain means `https://<domain>/` (Auth0).
 */
export function tenantIssuer(domain: string): string {
  const d = domain.trim();
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(d) ? d : `https://${noTrailingSlash(d)}/`;
}

/**
 * `s` without its trailing slashes, in one pass from the end (`/\/+$/` took quadratic time: the
 * unsigned `iss` of a login token of 48,000 slashes held the service 2 s before any check).
 */
export function noTrailingSlash(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 47) end--;
  return s.slice(0, end);
}

/** Issuers compare without their trailing slash (providers differ in writing it). */
export const sameIssuer = (a: string, b: string) => noTrailingSlash(a) === noTrailingSlash(b);
