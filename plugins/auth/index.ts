import {
  basicAuthRef, definePlugin, thaw, httpHooksRef, loginValidatorsRef, optional,
} from '../../sdk/index.ts';
import { iamAccessRef } from '../iam/api.ts';
import { AuthPluginConfig, validateApiAuth } from './schema.ts';

/**
 * Authentication of the API (reference section 3): local login and JWTs, the kernel's
 * `authorize` hook (tokens, `disable_localhost`; the IP lists and `read_only` are the core's),
 * brute-force slowing of failed logins, and HTTP Basic auth as a service for the filesystem plugins.
 */
export default definePlugin({
  name: 'auth',
  configSchema: AuthPluginConfig,
  sectionKey: 'api.auth',
  enableKey: 'api.auth.enable',
  validate: (_own, whole) => validateApiAuth(whole.api.auth),
  reads: ['api'],
  deps: { validators: loginValidatorsRef, iam: optional(iamAccessRef) },
  provides: [basicAuthRef],
  async setup(ctx) {
    const api = thaw(ctx.sections.api);
    // imported when mounted: the core reads every built-in's definition, loaded or not
    const [{ BasicAuth }, { loginRoutes }, { AuthService }, { LoginThrottle }] = await Promise.all([
      import('./basic-auth.ts'), import('./routes.ts'), import('./service.ts'), import('./throttle.ts'),
    ]);
    const throttle = {
      baseMs: ctx.config.fail_delay_ms,
      maxMs: ctx.config.fail_delay_max_ms,
      forgetMs: ctx.config.fail_forget_ms,
      maxEntries: ctx.config.fail_max_addresses,
      maxPending: ctx.config.fail_max_pending,
    };
    const service = new AuthService({ auth: api.auth, validators: ctx.deps.validators, throttle, iam: ctx.deps.iam });
    ctx.onClose(() => service.close());
    // Basic guesses (memfs writes) are slowed like logins, in a throttle of their own
    const basicThrottle = new LoginThrottle(throttle);
    ctx.onClose(() => basicThrottle.close());

    ctx.hooks.tap(httpHooksRef, 'authorize', (input) => service.authorize(input));
    ctx.provide(basicAuthRef, new BasicAuth({ throttle: basicThrottle, iam: ctx.deps.iam }));

    // without auth the login routes do not exist (reference 3.1): they are a 404 like any unknown route
    if (api.auth.enable) await loginRoutes(ctx.http, service);
    if (api.auth.enable) ctx.log.info({ validators: ['localjwt', ...ctx.deps.validators.map((v) => v.name)] }, 'API authentication enabled');
  },
});
