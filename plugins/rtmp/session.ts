import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { askIngest, tellIngest, type IngestPeer, type ingestHooksRef, type IngestRefusal } from '../../sdk/index.ts';
import type { RtmpWire, RtmpWireLayer, WireRequest, MediaPacket } from './nms-adapter.ts';
import type { Channel, Hub } from './hub.ts';
import { streamPath, resolveTarget, checkToken, checkApp, type StreamTarget } from './names.ts';

type IngestHooks = ReturnType<typeof ingestHooksRef.create>;

/** What every connection of one listener shares. */
export interface SessionDeps {
  wire: RtmpWireLayer;
  hub: Hub;
  hooks: Readonly<IngestHooks>;
  log: Logger;
  /** `rtmp` or `rtmps`. */
  protocol: string;
  token: string;
  app: string;
  /** A player whose unsent output exceeds this is dropped (it cannot keep up). */
  maxPlayerBacklog: number;
}

function remoteOf(socket: Socket): string {
  const ip = socket.remoteAddress ?? '';
  return `${ip.includes(':') ? `[${ip}]` : ip}:${socket.remotePort ?? 0}`;
}

/**
 * One RTMP connection: its protocol state, its checks and its bytes. While a publish or play is
 * being checked (token, app, the async `ingest.pre*` taps) the connection is held: nothing is
 * registered or broadcast, the socket is paused and packets already parsed are kept aside; on
 * refusal they are dropped with the socket, never reaching a player.
 */
export class RtmpSession {
  readonly id: string;
  readonly #socket: Socket;
  readonly #deps: SessionDeps;
  readonly #wire: RtmpWire;
  readonly #remote: string;
  #state: 'open' | 'checking' | 'publishing' | 'playing' | 'closed' = 'open';
  #held: MediaPacket[] = [];
  #channel?: Channel;
  #peer?: IngestPeer;
  #rx = 0;
  #tx = 0;

  constructor(socket: Socket, deps: SessionDeps) {
    this.#socket = socket;
    this.#deps = deps;
    this.id = deps.hub.nextId();
    this.#remote = remoteOf(socket);
    this.#wire = deps.wire.createWire({
      output: (b) => this.#write(b),
      publish: (req) => void this.#publish(req),
      play: (req) => void this.#play(req),
      packet: (p) => this.#packet(p),
    });
    socket.on('data', (d: Buffer) => this.#data(d));
    socket.on('error', (err) => deps.log.debug({ id: this.id, err: err.message }, 'rtmp connection error'));
    socket.on('close', () => this.#closed());
  }

  #write(b: Buffer): void {
    if (this.#socket.destroyed) return;
    this.#tx += b.length;
    this.#socket.write(b);
  }

  #data(d: Buffer): void {
    this.#rx += d.length;
    const err = this.#wire.feed(d);
    if (err) {
      this.#deps.log.warn({ id: this.id, remote: this.#remote, err }, 'rtmp protocol error; connection closed');
      this.#socket.destroy();
    }
  }

  // packets parsed from the same read as `publish`, before the checks are done, wait in #held
  #packet(p: MediaPacket): void {
    if (this.#state === 'publishing') this.#forward(p);
    else if (this.#state === 'checking') this.#held.push(p);
  }

  #forward(p: MediaPacket): void {
    const ch = this.#channel!;
    if (p.kind === 'metadata' && p.body) ch.metadata = this.#deps.wire.decodeMetadata(p.body) ?? ch.metadata;
    ch.push(p);
  }

  #target(req: WireRequest, mode: 'publish' | 'play'): StreamTarget | undefined {
    const path = streamPath(req.app, req.name);
    if (!path) return this.#refuse(mode, `/${req.app}/${req.name}`, { reason: 'invalid stream name', kind: 'not_found' }), undefined;
    const target = resolveTarget(path, req.query, this.#deps.token);
    const bad = checkToken(target, this.#deps.token) ?? (mode === 'publish' ? checkApp(target.path, this.#deps.app) : undefined);
    if (bad) return this.#refuse(mode, target.path, { reason: bad.reason, kind: bad.kind === 'bad_request' ? 'forbidden' : bad.kind }), undefined;
    return target;
  }

  #makePeer(t: StreamTarget): IngestPeer {
    return {
      id: this.id, protocol: this.#deps.protocol, stream: t.path, remote: this.#remote, token: t.token, params: t.params,
      traffic: () => ({ rxBytes: this.#rx, txBytes: this.#tx }),
    };
  }

  /** Holds the connection while `check` runs; false if it was closed meanwhile. */
  async #hold(check: () => Promise<IngestRefusal | undefined>): Promise<IngestRefusal | undefined | 'gone'> {
    this.#state = 'checking';
    this.#socket.pause();
    const refusal = await check();
    return this.#socket.destroyed ? 'gone' : refusal;
  }

  async #publish(req: WireRequest): Promise<void> {
    if (this.#state !== 'open') return this.#refuse('publish', req.name, { reason: 'one stream per connection', kind: 'conflict' });
    const t = this.#target(req, 'publish');
    if (!t) return;
    const peer = this.#makePeer(t);
    if (this.#deps.hub.get(t.path)) return this.#refuse('publish', t.path, { reason: 'already publishing', kind: 'conflict' });
    const r = await this.#hold(() => askIngest(this.#deps.hooks.prePublish, peer));
    if (r === 'gone') return;
    if (r) return this.#refuse('publish', t.path, r);
    const ch = this.#deps.hub.claim(t.path, this.id, this.#remote);
    if (!ch) return this.#refuse('publish', t.path, { reason: 'already publishing', kind: 'conflict' });
    this.#channel = ch;
    this.#peer = peer;
    this.#state = 'publishing';
    this.#deps.log.info({ id: this.id, remote: this.#remote, stream: t.path, protocol: this.#deps.protocol }, 'rtmp publish started');
    tellIngest(this.#deps.hooks.onPublish, this.#hookError, peer);
    const held = this.#held;
    this.#held = [];
    for (const p of held) this.#forward(p);
    this.#socket.resume();
  }

  async #play(req: WireRequest): Promise<void> {
    if (this.#state !== 'open') return this.#refuse('play', req.name, { reason: 'one stream per connection', kind: 'conflict' });
    const t = this.#target(req, 'play');
    if (!t) return;
    const peer = this.#makePeer(t);
    const r = await this.#hold(() => askIngest(this.#deps.hooks.prePlay, peer));
    if (r === 'gone') return;
    if (r) return this.#refuse('play', t.path, r);
    const ch = this.#deps.hub.get(t.path);
    if (!ch) return this.#refuse('play', t.path, { reason: 'stream not found', kind: 'not_found' });
    this.#channel = ch;
    this.#peer = peer;
    this.#state = 'playing';
    this.#deps.log.info({ id: this.id, remote: this.#remote, stream: t.path, protocol: this.#deps.protocol }, 'rtmp play started');
    tellIngest(this.#deps.hooks.onPlay, this.#hookError, peer);
    ch.join({ id: this.id, send: (b) => this.#send(b), stop: () => this.#stop() });
    this.#socket.resume();
  }

  /** Writes to a player, dropping it when it is too far behind to ever catch up. */
  #send(b: Buffer): boolean {
    if (this.#socket.destroyed) return false;
    if (this.#socket.writableLength > this.#deps.maxPlayerBacklog) {
      this.#deps.log.warn({ id: this.id, remote: this.#remote, stream: this.#channel?.path }, 'rtmp player too slow; dropped');
      this.#socket.destroy();
      return false;
    }
    // one writev per player for all packets of one publisher read, not one write per packet
    if (this.#socket.writableCorked === 0) {
      this.#socket.cork();
      process.nextTick(() => this.#socket.uncork());
    }
    this.#write(b);
    return true;
  }

  /** The publisher left: the reference's stop statuses, then end of the connection. */
  #stop(): void {
    this.#wire.status('status', 'NetStream.Play.UnpublishNotify', 'stream is now unpublished');
    this.#wire.status('status', 'NetStream.Play.Stop', 'stopped playing stream');
    this.#socket.end();
  }

  #refuse(mode: string, stream: string, r: IngestRefusal): void {
    this.#deps.log.warn({ id: this.id, remote: this.#remote, stream, kind: r.kind ?? 'forbidden', protocol: this.#deps.protocol }, `rtmp ${mode} refused: ${r.reason}`);
    this.#held = [];
    // destroy, not end: a half-closed publisher keeps sending and its media must go nowhere
    this.#socket.destroy();
  }

  #hookError = (err: Error): void => { this.#deps.log.error({ id: this.id, err: err.message }, 'an ingest hook failed'); };

  /** Exactly once per connection: the end hooks of what it was doing. */
  #closed(): void {
    const was = this.#state;
    this.#state = 'closed';
    this.#held = [];
    const peer = this.#peer;
    const traffic = { rxBytes: this.#rx, txBytes: this.#tx };
    if (was === 'publishing' && this.#channel) {
      this.#deps.hub.release(this.#channel);
      this.#deps.log.info({ id: this.id, stream: this.#channel.path, ...traffic }, 'rtmp publish ended');
      tellIngest(this.#deps.hooks.onPublishEnd, this.#hookError, peer!, traffic);
    } else if (was === 'playing' && this.#channel) {
      this.#channel.leave(this.id);
      this.#deps.log.info({ id: this.id, stream: this.#channel.path, ...traffic }, 'rtmp play ended');
      tellIngest(this.#deps.hooks.onPlayEnd, this.#hookError, peer!, traffic);
    }
  }
}
