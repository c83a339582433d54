import pino from 'pino';
import { fsServeHooksRef, PlaylistRewrites, responseBytes, type FsServeRequest, type PluginHooks } from '../../sdk/index.ts';
import { tapHls } from '../../plugins/sessions/hls.ts';
import { SessionRegistry } from '../../plugins/sessions/registry.ts';
import { PLAYLIST } from './servers.ts';

/**
 * The JavaScript the sessions plugin adds to one playlist request of a known viewer, without
 * sockets: `preServe`, `transformPlaylist` (through `PlaylistRewrites`) and `onServed` with the
 * real taps. Load on a shared machine moves syscall time a lot and this figure little.
 * Returns microseconds per request.
 */
export function hooksCostUs(n = 200_000): number {
  const hooks = fsServeHooksRef.create();
  const ctxHooks = { get: () => hooks, tap: (_r: unknown, name: string, fn: never) => (hooks as Record<string, { tap(o: string, f: never): void }>)[name]!.tap('sessions', fn) } as unknown as PluginHooks;
  const registry = new SessionRegistry({
    enable: true, ip_ignorelist: [], session_timeout_sec: 30, persist: false, persist_interval_sec: 0, max_bitrate_mbit: 0, max_sessions: 0,
  }, undefined, pino({ level: 'silent' }));
  tapHls(ctxHooks, registry.collector('hls'), registry.collector('hlsingress', { limits: false }), []);
  const rewrites = new PlaylistRewrites();
  const headers = { host: '127.0.0.1', 'user-agent': 'bench' };
  const res = { _header: 'x'.repeat(220) };
  const one = () => {
    const req: FsServeRequest = { mount: '/memfs', path: '/live/index.m3u8', query: 'session=2222222222222222222222', remote: '127.0.0.1', headers, method: 'GET' };
    if (hooks.preServe.call(req)) throw new Error('refused');
    const body = rewrites.apply(hooks, req, req.path, PLAYLIST)!;
    hooks.onServed.call({ request: req, status: 200, bytes: responseBytes(res, body.length) });
  };
  for (let i = 0; i < 20_000; i++) one();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) one();
  return Number(process.hrtime.bigint() - t0) / n / 1000;
}
