import { existsSync } from 'node:fs';
import { childrenRef, definePlugin, optional, placeholdersRef, processHooksRef, runCredentialsRef, streamTableRef } from '../../sdk/index.ts';
import { iamAccessRef } from '../iam/api.ts';
import { SrtConfig, validateSrt } from './schema.ts';
import { hostPath } from './native.ts';
import { FIX } from './errors.ts';

/**
 * The SRT server on `srt.address`: publish and request (play) of MPEG-TS by streamid through the
 * service's stream table (one publisher per stream, many subscribers, streams of every protocol), token and passphrase checked in the handshake,
 * `GET /api/v3/srt`, the `{srt}` placeholder and the ingest hooks. libsrt runs in the SRT host,
 * a small native program (addon/host.cc; the relay over its events runs here, host/), started
 * only when `srt.enable` is true, so a fault in libsrt never ends the service.
 */
export default definePlugin({
  name: 'srt',
  configKey: 'srt',
  enableKey: 'srt.enable',
  configSchema: SrtConfig,
  validate: validateSrt,
  deps: { placeholders: placeholdersRef, children: childrenRef, streams: streamTableRef, runs: runCredentialsRef, iam: optional(iamAccessRef) },
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enable) {
      // slim: no host runs; only say early that enabling SRT would fail
      if (!existsSync(hostPath())) ctx.log.info({ fix: FIX }, 'SRT is off and its host is not built');
      return;
    }
    // imported when enabled: the core reads every built-in's definition, loaded or not
    const [{ startSrt, hostSettings }, { srtRoutes }, { srtPlaceholder }, { runPusher, runSrtUses }] = await Promise.all([
      import('./service.ts'), import('./routes.ts'), import('./placeholder.ts'), import('./run-scope.ts'),
    ]);
    // iam: only whether an access plugin decides users' keys (the stream table's admission asks it)
    const opts = { hostPath: hostPath(), log: ctx.log, children: ctx.deps.children, streams: ctx.deps.streams, userKeys: ctx.deps.iam !== undefined };
    // a reload that leaves every setting the host takes at its start as it is keeps the host and
    // its connections; at close the host ends every connection (the end hooks fire) and exits
    const srt = await ctx.keep({
      key: 'host', settings: hostSettings(cfg, ctx.deps.iam !== undefined), open: () => startSrt(cfg, opts), close: (s) => s.host.close(),
      holds: (s) => [{ key: 'srt.address', proto: 'udp', port: s.host.port }],
    });
    srt.host.rebind(opts);
    // the IAM users' own passphrases, for the handshake (the host keys a user's connection with its)
    const iam = ctx.deps.iam;
    if (iam) {
      const push = () => srt.host.setUsers({ ...iam.srtPassphrases() });
      push();
      ctx.onClose(iam.onUsersChanged(push));
    }
    ctx.onReady(() => srt.host.announce());
    ctx.deps.placeholders.register(srtPlaceholder({ host: srt.bindHost, port: () => srt.host.port, token: cfg.token, passphrase: cfg.passphrase }));
    // the children's run credentials: the host knows each run before its child starts (preStart
    // waits for it) and forgets it when the run ends
    const pusher = runPusher(ctx.deps.runs, (list) => srt.host.setRuns(list));
    ctx.onClose(ctx.deps.runs.watch(() => { void pusher.push(); }));
    // what a process's command names here, for its maker's policies
    ctx.onClose(ctx.deps.runs.describe(runSrtUses));
    ctx.hooks.get(processHooksRef).preStart.tapPromise('srt', async (start) => { await pusher.beforeStart(start.id); return start; });
    srtRoutes(ctx.http, srt.host);
  },
});
