import pino from 'pino';
import type { FileDoorCounter, FileDoorTaps } from '../../../sdk/file-door.ts';
import { fsServeHooksRef, type FsServeRefusal, type FsServeRequest } from '../../../sdk/fs-hooks.ts';
import { SessionRegistry } from '../../../plugins/sessions/registry.ts';
import { HlsViewers } from '../../../plugins/sessions/hls-viewers.ts';
import hlsViewers from '../../../plugins/sessions/hls.ts';
import type { SessionsConfig } from '../../../plugins/sessions/schema.ts';
import { DoorTapModules } from '../../../core/door/tap-modules.ts';
import { tapContext, type WireReport } from '../../../core/door/tap-state.ts';

/**
 * The sessions plugin's HLS rule without a server: the plugin's side (HlsViewers on a registry)
 * on the core's door tap modules, main's copy of the rule, and thread copies over fake queues. A
 * "main" copy gets its messages at once, as the core delivers them on main; a "thread" copy's
 * reports and broadcasts wait in its queues until `deliver()`, as a thread's would until its next
 * turn (so the copies can race).
 */
export interface FakeCopy {
  taps: FileDoorTaps;
  /** Reports this copy sent and main has not received yet (threads). */
  outbox: WireReport[];
  /** Broadcasts this copy has not received yet (threads). */
  inbox: unknown[];
  /** Delivers both queues. */
  deliver(): void;
  /** Delivers what the copy sent to main. */
  send(): void;
  /** Delivers main's broadcasts to the copy. */
  receive(): void;
}

export interface FakeDoor {
  registry: SessionRegistry;
  /** The door's side: the reservations' expiry at `now`, and the plugin's tick. */
  door: { tick(now: number): void };
  /** The door's counter as main sees it. */
  counter: Pick<FileDoorCounter, 'taken'>;
  limits: string[];
  copies: FakeCopy[];
  copy(kind: 'main' | 'thread', flushMs?: number): FakeCopy;
  /** Delivers every thread's queues. */
  deliverAll(): void;
  /** The registry's tick and the plugin's, at `now`. */
  tick(now?: number): void;
}

export function fakeDoor(cfg: Partial<SessionsConfig> = {}): FakeDoor {
  const registry = new SessionRegistry({
    enable: true, ip_ignorelist: [], session_timeout_sec: 30, persist: false, persist_interval_sec: 0, max_bitrate_mbit: 0, max_sessions: 0, ...cfg,
  }, undefined, pino({ level: 'silent' }));
  const hls = registry.collector('hls');
  const ingress = registry.collector('hlsingress', { idleTimeoutSec: 30, limits: false });
  for (const name of ['rtmp', 'srt', 'ffmpeg']) registry.collector(name);
  const limits: string[] = [];
  const viewers = new HlsViewers(hls, ingress, cfg.ip_ignorelist ?? [], (reason) => limits.push(reason));
  const hooks = fsServeHooksRef.create();
  const modules = new DoorTapModules(hooks);
  const copies: FakeCopy[] = [];
  const threads: Array<{ copy: FakeCopy; fn: (m: unknown) => void }> = [];
  modules.toThreads = (m) => { for (const r of threads) if (m.t === 'tap') r.copy.inbox.push(structuredClone(m.message)); };
  const channel = modules.attach(viewers.module, hlsViewers);
  viewers.connect(channel);
  const [wire] = modules.wire();
  const mainTaps: FileDoorTaps = {
    preServe: (r) => hooks.preServe.call(r),
    transformPlaylist: (b, r) => hooks.transformPlaylist.call(b, r),
    onServed: (e) => hooks.onServed.call(e),
  };
  const copy = (kind: 'main' | 'thread', flushMs?: number): FakeCopy => {
    const c: FakeCopy = {
      taps: mainTaps, outbox: [], inbox: [],
      deliver() {
        c.send();
        c.receive();
      },
      send() {
        for (const r of c.outbox.splice(0)) modules.reportOf(wire!.name, r);
      },
      receive() {
        const fn = threads.find((r) => r.copy === c)?.fn;
        for (const m of c.inbox.splice(0)) fn?.(m);
      },
    };
    if (kind === 'thread') {
      // a thread gets a structured clone of init: the SharedArrayBuffer stays shared
      const t = tapContext(structuredClone(wire!.init), wire!.state, {
        send: () => {},
        onMessage: (fn) => threads.push({ copy: c, fn }),
        report: (r) => c.outbox.push(structuredClone(r)),
      }, flushMs === undefined, flushMs);
      const taps = hlsViewers(t.ctx);
      c.taps = { ...taps, close: () => t.close() };
    }
    copies.push(c);
    return c;
  };
  return {
    registry, limits, copies, copy, counter: channel.counter,
    door: { tick: (now) => { modules.expire(now); viewers.tick(); } },
    deliverAll() {
      for (const c of copies) c.send();
      for (const c of copies) c.receive();
    },
    tick(now = Date.now()) {
      for (const name of registry.names()) registry.get(name)!.tick(now);
      modules.expire(now);
      viewers.tick();
    },
  };
}

/** A GET of a public mount as the door hands it to the taps. */
export function get(path: string, query = '', remote = '10.0.0.1', headers: FsServeRequest['headers'] = {}): FsServeRequest {
  return { mount: '/memfs', path, query, remote, headers, method: 'GET' };
}

/** preServe, and the playlist rewrite when admitted: what the client would get. */
export function fetchPlaylist(taps: FileDoorTaps, req: FsServeRequest, body: string): FsServeRefusal | string {
  const refusal = taps.preServe?.(req);
  if (refusal) return refusal;
  return taps.transformPlaylist ? taps.transformPlaylist(body, req) : body;
}

export const MEDIA = '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nx_0001.ts\n#EXTINF:1,\nx_0002.ts\n';
