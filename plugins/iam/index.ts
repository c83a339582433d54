import {
  definePlugin, filesystemsRef, fsServeHooksRef, httpHooksRef, ingestHooksRef, loginValidatorsRef, optional, processesRef, runCredentialsRef, type BasicCredentials, type FilesystemService, type PluginHooks, type RunCredentials,
} from '../../sdk/index.ts';
import type { GateMounts } from './reads.ts';
import { idpVerifierRef } from '../idp-login/api.ts';
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
  deps: { processes: processesRef, filesystems: filesystemsRef, runs: optional(runCredentialsRef), idp: optional(idpVerifierRef) },
  provides: [iamAccessRef, iamReplicaRef, loginValidatorsRef],
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enable) return;
    const [{ Users, parseUsers }, { iamRoutes }, { IamApiAccess, iamLogin }, { Delegation }, { sessionTokenRoute }, reads] = await Promise.all([
      import('./users.ts'), import('./routes.ts'), import('./access.ts'), import('./delegate.ts'), import('./token-route.ts'), import('./reads.ts'),
    ]);
    const doc = await ctx.state.open<import('./users.ts').UsersDoc>('users', { init: () => ({ users: [] }), parse: parseUsers });
    const admin = ctx.sections.api.auth.username;
    const reserved = new Set(admin ? [admin] : []);
    const users = new Users({ doc, maxUsers: cfg.max_users, maxPolicies: cfg.max_policies, reserved });
    const delegation = new Delegation(users);
    iamRoutes(ctx.http, users, delegation);
    sessionTokenRoute(ctx.http, users, delegation);
    gateReads(ctx, users, reads, ctx.deps.filesystems, ctx.deps.runs);
    // the cluster plugin shares the users between nodes through this (users.ts: write first, apply)
    ctx.provide(iamReplicaRef, users);
    // the auth plugin asks both: who logs in (POST /api/login), what an IAM user's token may do
    const access = new IamApiAccess(users, ctx.deps.processes);
    ctx.provide(iamAccessRef, access);
    ctx.hooks.tap(httpHooksRef, 'processAccess', (request, q) => access.processAccess(request, q));
    ctx.hooks.tap(httpHooksRef, 'processUse', (request, use) => access.processUse(request, use));
    ctx.hooks.tap(httpHooksRef, 'processUseBy', (maker, use, since) => access.processUseBy(maker, use, since));
    ctx.hooks.tap(httpHooksRef, 'mayChange', (request, made) => access.mayChange(request, made));
    ctx.hooks.tap(httpHooksRef, 'makerFolders', (maker, since, list) => access.makerFolders(maker, since, list));
    // a running process whose maker lost what it names stops now, not at its next start (once per burst of saved changes)
    let recheck: NodeJS.Immediate | undefined;
    users.onChange(() => {
      recheck ??= setImmediate(() => {
        recheck = undefined;
        try {
          const n = ctx.deps.processes.recheckMakers();
          if (n > 0) ctx.log.info({ processes: n }, 'IAM changed: processes whose makers may no longer do what they name stopped, and those stopped so that they may again started');
        } catch (err) {
          ctx.log.warn({ err }, 'IAM changed: the running processes could not be checked');
        }
      });
    }, true);
    ctx.onClose(() => { if (recheck) clearImmediate(recheck); });
    // a stream client's key `<user>:<token>`: decided in the stream table's admission, for every protocol
    ctx.hooks.tap(ingestHooksRef, 'decideKey', (peer, role) => access.decideKey(peer, role));
    // the application log, metrics and sessions show a user what is about what it may see
    ctx.hooks.tap(httpHooksRef, 'sees', (request, about) => access.sees(request, about));
    const login = iamLogin(users, reserved, { baseMs: cfg.fail_delay_ms, maxMs: cfg.fail_delay_max_ms });
    ctx.provide(loginValidatorsRef, login);
    // users that log in with their identity provider's token (idp-login verifies it)
    if (ctx.deps.idp) ctx.provide(loginValidatorsRef, (await import('./auth0.ts')).auth0Login(users, ctx.deps.idp));
    ctx.onClose(() => login.close());
    ctx.log.info({ users: users.list().length - 1 }, 'IAM users loaded');
  },
});

type Ctx = { hooks: PluginHooks; log: { info(msg: string): void; warn(obj: object, msg: string): void } };

/** Refusal lines of the file reads a second, at most (the rest are counted in the next line). */
const REFUSALS_PER_SECOND = 20;

/**
 * Reads of the public mounts by `fs` policies (reads.ts): tapped first among the read taps, and
 * only once `$anon` may not read everything (until then the serving threads serve reads alone).
 */
function gateReads(ctx: Ctx, users: import('./users.ts').Users, reads: typeof import('./reads.ts'), filesystems: readonly FilesystemService[], runs: RunCredentials | undefined): void {
  // LL-HLS decides its own reads (a stream's key, `hls` policies)
  const mounts = (): GateMounts => {
    const exempt = new Set<string>();
    const creds = new Map<string, BasicCredentials>();
    for (const f of filesystems) {
      if (f.publicMount?.asks) exempt.add(f.mount);
      const basic = f.publicMount?.writes?.basic;
      if (basic) creds.set(f.mount, basic);
    }
    return { exempt, creds };
  };
  let known: GateMounts | undefined;
  const gate = new reads.ReadGate(users, () => (known ??= mounts()), () => runs);
  let tapped = false;
  const tap = () => {
    if (tapped || !gate.needed) return;
    tapped = true;
    let second = 0;
    let lines = 0;
    let skipped = 0;
    ctx.hooks.tap(fsServeHooksRef, 'preServe', (req) => {
      const r = gate.decide(req);
      // the Basic challenge of a request without credentials is the usual first step: not logged
      if (!r || (r.status === 401 && req.headers.authorization === undefined)) return r;
      const now = Math.floor(Date.now() / 1000);
      if (now !== second) [second, lines] = [now, 0];
      if (++lines > REFUSALS_PER_SECOND) {
        skipped++;
        return r;
      }
      const path = (req.mount === '/' ? req.path : req.mount + req.path).slice(0, 256);
      ctx.log.warn({ path, action: req.method, remote: req.remote, code: r.code, ...(skipped ? { refused_since_last_line: skipped } : {}) }, `fs read refused: ${r.details[0]}`);
      skipped = 0;
      return r;
    }, { stage: -100 });
    ctx.hooks.tap(fsServeHooksRef, 'transformPlaylist', (body, req) => {
      const token = gate.needed && !known?.exempt.has(req.mount) ? reads.tokenParam(req.query) : undefined;
      return token === undefined ? body : reads.carryToken(body, token);
    }, { stage: -100 });
    ctx.log.info('anonymous reads of the public mounts are restricted: reads are decided by fs policies (on the main thread)');
  };
  tap();
  users.onChange(() => { gate.refresh(); tap(); });
}
