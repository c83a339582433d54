import { ConfigErrorList, definePlugin, httpHooksRef, isApiError, processesRef, streamTableRef, type ConfigErrors } from '../../sdk/index.ts';
import { laddersRef } from './api.ts';
import { ENCODERS, X264_PRESETS } from './command.ts';
import { resolveLadder, type Ladder } from './presets.ts';
import { LaddersConfig } from './schema.ts';

/** The config file's ladders, resolved; each refusal added to `errs` under its path. */
function configLadders(cfg: LaddersConfig, errs?: ConfigErrorList): Ladder[] {
  const out: Ladder[] = [];
  const seen = new Map<string, string>();
  cfg.ladders.forEach((e, i) => {
    try {
      const l = resolveLadder(e.id, e, 'config');
      const key = l.stream !== undefined ? `stream ${l.stream}` : `pattern ${l.pattern}`;
      if (seen.has(e.id)) errs?.add(`ladders.${i}.id`, `'${e.id}' is given twice`);
      else if ([...seen.values()].includes(key)) errs?.add(`ladders.${i}`, `${key} has two ladders`);
      seen.set(e.id, key);
      out.push(l);
    } catch (err) {
      if (!isApiError(err)) throw err;
      errs?.add(`ladders.${i}`, err.details.join('; '));
    }
  });
  return out;
}

function validateLadders(s: LaddersConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  if (!ENCODERS.includes(s.encoder)) errs.add('encoder', `one of ${ENCODERS.join(', ')}`);
  if (!X264_PRESETS.includes(s.preset)) errs.add('preset', `one of ${X264_PRESETS.join(', ')}`);
  if (s.ladders.length > s.max_ladders) errs.add('ladders', `at most max_ladders (${s.max_ladders})`);
  configLadders(s, errs);
  return errs.map;
}

/**
 * Adaptive-bitrate ladders: renditions `<stream>/<rung>` of streams of the stream table, made by
 * one on-demand process of the engine per stream (one ffmpeg decoding the source once, a scaled
 * encode per rung with keyframes aligned across rungs), started by a reader of a rendition and
 * stopped after the last left. `/api/v3/ladders`; off unless `ladders.enable`.
 */
export default definePlugin({
  name: 'ladders',
  configKey: 'ladders',
  enableKey: 'ladders.enable',
  configSchema: LaddersConfig,
  validate: validateLadders,
  deps: { processes: processesRef, streams: streamTableRef },
  provides: [laddersRef],
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enable) return;
    const [{ Ladders }, { ladderRoutes }] = await Promise.all([import('./service.ts'), import('./routes.ts')]);
    const ladders = new Ladders({ processes: ctx.deps.processes, streams: ctx.deps.streams, state: ctx.state, log: ctx.log, config: cfg }, configLadders(cfg));
    await ladders.open();
    ctx.provide(laddersRef, ladders);
    // under an access plugin a user replaces or deletes only the ladders it made
    const hook = ctx.hooks.get(httpHooksRef).mayChange;
    ladderRoutes(ctx.http, ladders, (req) => (maker, since) => hook.call(req, { maker, since }) !== false);
    let off: (() => void) | undefined;
    // after the engine's own start (it runs first): the processes are then made, changed or removed
    ctx.onListen(() => {
      off ??= ctx.deps.streams.onChange(() => ladders.changed());
      ladders.changed();
    });
    ctx.onShutdown(() => { off?.(); ladders.close(); });
  },
});
