import { ConfigErrorList, type ConfigErrors, type KernelConfig } from '../../sdk/index.ts';

/**
 * The plugin owns `api.auth.idp` (alias `api.auth.auth0`, kept identical by the core); its schema
 * is `IdpConfig` of the SDK's config sections. Rules a schema cannot state, keys relative to
 * `api.auth.idp`.
 */
export function validateIdp(_own: unknown, whole: Readonly<KernelConfig>): ConfigErrors {
  const errs = new ConfigErrorList();
  const idp = whole.api.auth.idp;
  if (!idp.enable) return errs.map;
  if (idp.tenants.length === 0) errs.add('tenants', 'at least one tenant is required');
  idp.tenants.forEach((t, i) => {
    for (const k of ['domain', 'audience', 'clientid'] as const) {
      if (!t[k]) errs.add('tenants', `tenant ${i}: ${k} must not be empty`);
    }
  });
  return errs.map;
}
