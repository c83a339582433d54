import type { IdpVerifier } from './api.ts';
import { sameIssuer, tenantIssuer } from './issuer.ts';

/*
 * `idpVerifierRef`: tokens of tenants named at the call (an IAM user's own tenant). `jose` loads
 * at the first token to verify, not at start; keys are kept per issuer, the oldest dropped beyond
 * `MAX_TENANTS`.
 */

const MAX_TENANTS = 256;

/** The `iss` of a JWT, read without verifying anything; undefined for no JWT. */
function issuerOfToken(token: string): string | undefined {
  const a = token.indexOf('.');
  const b = token.indexOf('.', a + 1);
  if (a < 0 || b < 0 || token.length > 16_384) return undefined;
  try {
    const iss = (JSON.parse(Buffer.from(token.slice(a + 1, b), 'base64url').toString()) as { iss?: unknown } | null)?.iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

export function idpVerifier(): IdpVerifier {
  const keys = new Map<string, unknown>();
  return {
    issuedBy: (token, domain) => {
      const iss = issuerOfToken(token);
      return iss !== undefined && sameIssuer(iss, tenantIssuer(domain));
    },
    async verify(token, tenant) {
      const { tenantKeys, verifyToken } = await import('./tenant.ts');
      const issuer = tenantIssuer(tenant.domain);
      let jwks = keys.get(issuer) as ReturnType<typeof tenantKeys> | undefined;
      if (!jwks) {
        if (keys.size >= MAX_TENANTS) keys.delete(keys.keys().next().value!);
        keys.set(issuer, (jwks = tenantKeys(issuer)));
      }
      return verifyToken(token, jwks, issuer, tenant.audience);
    },
  };
}
