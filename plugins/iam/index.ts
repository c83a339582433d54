import { definePlugin, httpHooksRef, ingestHooksRef, loginValidatorsRef, processesRef } from '../../sdk/index.ts';
import { iamAccessRef, iamReplicaRef } from './api.ts';
import { IamConfig } from './schema.ts';

/**
 * Users and policies (plugin `iam`, issue 49): users with their own credentials and policies,
 * stored like processes (`<db.dir>/plugins/iam/users.json`, atomic), `/api/v3/iam/user` as the
 * reference's successor has it. The config file's API user stays the superuser. Off unless
 * `iam.enable`. Built in floors: users stored, their API login and `api` policies; the
 * processes', file mounts' and protocols' decisions come next (README).
 */
export default definePlugin({
  name: 'iam',
  configKey: 'iam',
  enableKey: 'iam.enable',
  configSchema: IamConfig,
  reads: ['api'],
  deps: { processes: processesRef },
  provides: [iamAccessRef, iamReplicaRef, loginValidatorsRef],
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enable) return;
    const [{ Users, parseUsers }, { iamRoutes }, { IamApiAccess, iamLogin }, { Delegation }] = await Promise.all([import('./users.ts'), import('./routes.ts'), import('./access.ts'), import('./delegate.ts')]);
    const doc = await ctx.state.open<import('./users.ts').UsersDoc>('users', { init: () => ({ users: [] }), parse: parseUsers });
    const admin = ctx.sections.api.auth.username;
    const reserved = new Set(admin ? [admin] : []);
    const users = new Users({ doc, maxUsers: cfg.max_users, maxPolicies: cfg.max_policies, reserved });
    iamRoutes(ctx.http, users, new Delegation(users));
    // the cluster plugin shares the users between nodes through this (users.ts: write first, apply)
    ctx.provide(iamReplicaRef, users);
    // the auth plugin asks both: who logs in (POST /api/login), what an IAM user's token may do
    const access = new IamApiAccess(users, ctx.deps.processes);
    ctx.provide(iamAccessRef, access);
    ctx.hooks.tap(httpHooksRef, 'processAccess', (request, q) => access.processAccess(request, q));
    // a stream client's key `<user>:<token>`: decided in the stream table's admission, for every protocol
    ctx.hooks.tap(ingestHooksRef, 'decideKey', (peer, role) => access.decideKey(peer, role));
    // the application log, metrics and sessions show a user what is about what it may see
    ctx.hooks.tap(httpHooksRef, 'sees', (request, about) => access.sees(request, about));
    const login = iamLogin(users, reserved, { baseMs: cfg.fail_delay_ms, maxMs: cfg.fail_delay_max_ms });
    ctx.provide(loginValidatorsRef, login);
    ctx.onClose(() => login.close());
    ctx.log.info({ users: users.list().length - 1 }, 'IAM users loaded');
  },
});
