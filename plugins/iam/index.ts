import { definePlugin } from '../../sdk/index.ts';
import { IamConfig } from './schema.ts';

/**
 * Users and policies (plugin `iam`, issue 49): users with their own credentials and policies,
 * stored like processes (`<db.dir>/plugins/iam/users.json`, atomic), `/api/v3/iam/user` as the
 * reference's successor has it. The config file's API user stays the superuser. Off unless
 * `iam.enable`. Built in floors: this one stores users and decides policies; logins and the
 * protocols asking it come next (README).
 */
export default definePlugin({
  name: 'iam',
  configKey: 'iam',
  enableKey: 'iam.enable',
  configSchema: IamConfig,
  reads: ['api'],
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enable) return;
    const [{ Users, parseUsers }, { iamRoutes }] = await Promise.all([import('./users.ts'), import('./routes.ts')]);
    const doc = await ctx.state.open<import('./users.ts').UsersDoc>('users', { init: () => ({ users: [] }), parse: parseUsers });
    const admin = ctx.sections.api.auth.username;
    const users = new Users({ doc, maxUsers: cfg.max_users, maxPolicies: cfg.max_policies, reserved: new Set(admin ? [admin] : []) });
    iamRoutes(ctx.http, users);
    ctx.log.info({ users: users.list().length - 1 }, 'IAM users loaded');
  },
});
