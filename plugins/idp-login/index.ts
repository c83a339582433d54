import { definePlugin, loginValidatorsRef, thaw } from '../../sdk/index.ts';
import { idpVerifierRef } from './api.ts';
import { validateIdp } from './schema.ts';

/**
 * Identity-provider login (`api.auth.idp.*`, alias `api.auth.auth0.*`): a token issued by a
 * configured tenant is exchanged at `POST /api/login` (owned by the `auth` plugin) for the
 * service's own tokens. One login validator per tenant.
 */
export default definePlugin({
  name: 'idp-login',
  sectionKey: 'api.auth.idp',
  enableKey: 'api.auth.idp.enable',
  validate: (own, whole) => validateIdp(own, whole),
  reads: ['api'],
  provides: [loginValidatorsRef, idpVerifierRef],
  async setup(ctx) {
    const auth = thaw(ctx.sections.api.auth);
    // without API auth there is no login route to contribute to
    if (!auth.enable) return;
    // an IAM user may name its own tenant (jose loads at its first token)
    const { idpVerifier } = await import('./verifier.ts');
    ctx.provide(idpVerifierRef, idpVerifier());
    if (!auth.idp.enable) return;
    // jose loads only with tenants to check
    const { TenantValidator } = await import('./tenant.ts');
    for (const tenant of auth.idp.tenants) {
      const v = new TenantValidator(tenant);
      ctx.provide(loginValidatorsRef, v);
      ctx.log.info({ tenant: tenant.domain, issuer: v.issuer }, 'identity-provider tenant');
    }
  },
});
