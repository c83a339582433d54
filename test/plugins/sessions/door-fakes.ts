import pino from 'pino';
import type { FileDoorChannel, FileDoorTaps } from '../../../sdk/file-door.ts';
import type { FsServeRefusal, FsServeRequest } from '../../../sdk/fs-hooks.ts';
import { SessionRegistry } from '../../../plugins/sessions/registry.ts';
import { HlsDoor } from '../../../plugins/sessions/door-main.ts';
import { hlsDoorTaps } from '../../../plugins/sessions/door-tap.ts';
import type { SessionsConfig } from '../../../plugins/sessions/schema.ts';

/**
 * The sessions plugin's door without a core: the plugin's side (HlsDoor on a registry) and copies
 * of the tap module over a fake channel. A "main" copy gets its messages at once, as the core
 * delivers them on main; a "thread" copy's messages wait in its queues until `deliver()`, as a
 * thread's would until its next turn (so the copies can race).
 */
export interface FakeCopy {
  taps: FileDoorTaps;
  /** Messages this copy sent and main has not received yet (threads). */
  outbox: unknown[];
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
  door: HlsDoor;
  limits: string[];
  copies: FakeCopy[];
  copy(kind: 'main' | 'thread', flushMs?: number): FakeCopy;
  /** Delivers every thread's queues. */
  deliverAll(): void;
  /** The registry's tick and the door's, at `now`. */
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
  const door = new HlsDoor(hls, ingress, cfg.ip_ignorelist ?? [], (reason) => limits.push(reason));
  const copies: FakeCopy[] = [];
  const receivers: { kind: 'main' | 'thread'; copy: FakeCopy; fn: (m: unknown) => void }[] = [];
  const channel: FileDoorChannel = {
    broadcast(m) {
      for (const r of receivers) {
        if (r.kind === 'main') r.fn(structuredClone(m));
        else r.copy.inbox.push(structuredClone(m));
      }
    },
    onMessage(fn) { receive = fn; },
    close() {},
  };
  let receive: (m: unknown) => void = () => {};
  door.connect(channel);
  const copy = (kind: 'main' | 'thread', flushMs?: number): FakeCopy => {
    const c: FakeCopy = {
      taps: {}, outbox: [], inbox: [],
      deliver() {
        c.send();
        c.receive();
      },
      send() {
        for (const m of c.outbox.splice(0)) receive(m);
      },
      receive() {
        const fn = receivers.find((r) => r.copy === c)?.fn;
        for (const m of c.inbox.splice(0)) fn?.(m);
      },
    };
    c.taps = hlsDoorTaps({
      // a thread gets a structured clone of init: the SharedArrayBuffer stays shared
      init: kind === 'main' ? door.module.init : structuredClone(door.module.init),
      send: (m) => (kind === 'main' ? receive(m) : c.outbox.push(structuredClone(m))),
      onMessage: (fn) => receivers.push({ kind, copy: c, fn }),
    }, { immediate: kind === 'main' || flushMs === undefined, flushMs });
    copies.push(c);
    return c;
  };
  return {
    registry, door, limits, copies, copy,
    deliverAll() {
      for (const c of copies) c.send();
      for (const c of copies) c.receive();
    },
    tick(now = Date.now()) {
      for (const name of registry.names()) registry.get(name)!.tick(now);
      door.tick(now);
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
