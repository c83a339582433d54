import {
  IdleTick, childrenRef, definePlugin, eventsRef, httpHooksRef, optional, processHooksRef, processesRef, runCredentialsRef, stateExtrasRef,
} from '../../sdk/index.ts';
import { playoutRef } from './api.ts';
import { PlayoutConfig, validatePlayout } from './schema.ts';
import type { RelayFactory } from './relays.ts';
import { openPlaylists } from './playlist/index.ts';
import { playlistUses } from './playlist/uses.ts';
import type { FastifyRequest } from 'fastify';

/** How often relays of processes that went away are looked for (stop/delete are handled at once). */
const SWEEP_MS = 5_000;

/**
 * Playout with stock ffmpeg: every process input written `playout:<url>` is read by a relay
 * (`relay/`) listening on a port of `playout.min_port..max_port`, and the process reads the
 * relay's continuous MPEG-TS (`-f mpegts -i tcp://127.0.0.1:<port>`, rewritten in `preStart`). When
 * the source drops, the relay sends the error frame, so the outputs keep going. Routes under
 * `/api/v3/process/{id}/playout/{inputid}/`, `playoutRef` for GraphQL. Disabled, `playout:`
 * inputs are read directly (prefix stripped) and every playout route answers 404.
 */
export default definePlugin({
  name: 'playout',
  configKey: 'playout',
  enableKey: 'playout.enable',
  configSchema: PlayoutConfig,
  validate: validatePlayout,
  reads: ['encoder', 'storage'],
  deps: { processes: processesRef, children: childrenRef, events: optional(eventsRef), runs: optional(runCredentialsRef) },
  provides: [playoutRef],
  events: [
    { type: 'playlist.item.started', subject: ['process', 'playlist'], description: 'A `playlist:` input started an item (its first keyframe reached the process).', payload: {
      item: 'the item\'s source', index: 'its index in the playlist',
    } },
    { type: 'playlist.item.skipped', subject: ['process', 'playlist'], description: 'A `playlist:` item could not be read and was skipped (the error frame covers the gap).', payload: {
      item: 'the item\'s source', reason: 'why (ffmpeg\'s last line, a missing file)',
    } },
  ],
  async setup(ctx) {
    const cfg = ctx.config;
    const { processes } = ctx.deps;
    // imported when mounted: the core reads every built-in's definition, loaded or not
    const [{ PortPool }, { RelayRegistry }, { PlayoutControl }, { playoutRoutes }] = await Promise.all([
      import('./ports.ts'), import('./service.ts'), import('./control.ts'), import('./routes.ts'),
    ]);
    // the engine is imported only when used (it spawns ffmpeg children)
    const create: RelayFactory = cfg.enable
      ? await import('./relay/index.ts').then((m) => (o) => new m.Relay(o))
      : () => { throw new Error('playout is not enabled'); };
    const frames = ctx.retain('errorframes', () => new Map<string, Buffer>());
    const ffmpeg = { binary: ctx.sections.encoder.binary, spawn: ctx.deps.children.spawn.bind(ctx.deps.children) };
    const playlists = await openPlaylists({
      state: ctx.state, diskDir: ctx.sections.storage.disk.dir, ffmpeg, events: ctx.deps.events,
      inputProblem: (address) => processes.inputProblem(address), makerMay: (id, u) => processes.makerMay(id, u),
    });
    let sweep: IdleTick | undefined;
    const relays = new RelayRegistry({
      enabled: cfg.enable, pool: new PortPool(cfg.min_port, cfg.max_port), processes, ffmpeg, create, frames, log: ctx.log,
      feed: playlists.feed, onHold: () => sweep?.wake(),
    });
    const control = new PlayoutControl(relays, processes, frames, ctx.sections.storage.disk.dir);
    ctx.provide(playoutRef, control);

    ctx.hooks.tap(processHooksRef, 'preSave', async (ev) => relays.preSave(ev));
    ctx.hooks.tap(processHooksRef, 'preStart', (p) => relays.preStart(p));
    ctx.hooks.tap(processHooksRef, 'viewCommand', (v) => relays.viewCommand(v));
    ctx.hooks.tap(processHooksRef, 'onStateChange', (ev) => relays.stateChanged(ev.id, ev.to, ev.cause));
    ctx.hooks.tap(processHooksRef, 'onDelete', (ev) => relays.deleted(ev.id));
    ctx.hooks.tap(stateExtrasRef, 'view', (v) => {
      const where = relays.playlists(v.id);
      if (where) v.playlist = where;
      return v;
    });
    const use = ctx.hooks.get(httpHooksRef).processUse;
    // the API caller as a maker: a switch's source and an item's probe reach of the disk what the caller's processes would
    const callerOf = (req: FastifyRequest) => (use.isUsed() && req.auth?.user !== undefined ? { maker: req.auth.user, since: Math.floor(Date.now() / 1000) } : undefined);
    playoutRoutes(ctx.http, control, (req) => (use.isUsed() ? (u) => use.call(req, u) !== false : undefined), callerOf);
    const callerDisk = (req: FastifyRequest) => {
      const c = callerOf(req);
      return c && processes.makerDisk(c);
    };
    if (cfg.enable) playlists.routes(ctx.http, (req, u) => !use.isUsed() || use.call(req, u) !== false, callerDisk);
    // a process's `playlist:` input reads the playlist's disk items: its maker must be allowed to (asked at create, update, each start)
    if (cfg.enable && ctx.deps.runs) ctx.onClose(ctx.deps.runs.describe((g) => playlistUses(g, (n) => playlists.store.get(n))));

    if (cfg.enable) {
      // only while a port is held (an idle service wakes for nothing: issue 46.2)
      sweep = new IdleTick(SWEEP_MS, () => {
        relays.sweep().catch((err: unknown) => ctx.log.warn({ err }, 'playout sweep failed'));
        return relays.holding;
      });
      sweep.wake();
      ctx.onClose(() => sweep?.stop());
    }
    // after the process engine's onShutdown stopped the processes that read the relays
    ctx.onClose(() => relays.close());
  },
});
