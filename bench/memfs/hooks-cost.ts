import pino from 'pino';
import { fsServeHooksRef, type FsServeRequest } from '../../sdk/index.ts';
import { PlaylistRewrites, responseBytes } from '../../core/door/serve-hooks.ts';
import { HlsViewers } from '../../plugins/sessions/hls-viewers.ts';
import { SessionRegistry } from '../../plugins/sessions/registry.ts';
import { DoorTapModules } from '../../core/door/tap-modules.ts';
import { PLAYLIST } from './servers.ts';

/**
 * The JavaScript the sessions plugin adds to one playlist request of a known viewer, without
 * sockets: `preServe`, `transformPlaylist` (through `PlaylistRewrites`) and `onServed` with the
 * real taps (main's copy of the door tap module). Load on a shared machine moves syscall time a lot and this figure little.
 * Returns microseconds per request.
 */
export async function hooksCostUs(n = 200_000): Promise<number> {
  const hooks = fsServeHooksRef.create();
  const registry = new SessionRegistry({
    enable: true, ip_ignorelist: [], session_timeout_sec: 30, persist: false, persist_interval_sec: 0, max_bitrate_mbit: 0, max_sessions: 0,
  }, undefined, pino({ level: 'silent' }));
  const viewers = new HlsViewers(registry.collector('hls'), registry.collector('hlsingress', { limits: false }), []);
  const door = new DoorTapModules(hooks);
  viewers.connect(await door.tap(viewers.module));
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
  const us = Number(process.hrtime.bigint() - t0) / n / 1000;
  door.close();
  return us;
}
