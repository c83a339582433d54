import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import {
  streamName, type FlvPacket, type IngestPeer, type IngestRefusal, type StreamPublisher, type RunCredentials, type StreamReader, type StreamRefusal,
  type StreamStopReason, type StreamTable,
} from '../../sdk/index.ts';
import type { RtmpWire, RtmpWireLayer, WireRequest, MediaPacket, WireLimits } from './nms-adapter.ts';
import { PlayerOutput } from './player-output.ts';
import { remoteOf } from './server.ts';
import { requestedStream, shownRequest, resolveTarget, checkToken, checkApp, type NameRefusal, type StreamTarget } from './names.ts';
import { runMayStream } from './run-scope.ts';

/** How long a refused connection stays half-closed after its error status, so the client reads it before the socket goes. */
const REFUSED_LINGER_MS = 1000;

/**
 * The `onStatus` error a refused client hears before its connection ends: a publisher
 * `NetStream.Publish.BadName` (what encoders stop on, instead of retrying a refused key or a busy
 * name), a player `NetStream.Play.StreamNotFound` for a name that is not there, else
 * `NetStream.Play.Failed`. The description is the refusal's reason, as logged.
 */
export function refusalStatus(mode: string, kind: IngestRefusal['kind']): string {
  if (mode === 'publish') return 'NetStream.Publish.BadName';
  return kind === 'not_found' ? 'NetStream.Play.StreamNotFound' : 'NetStream.Play.Failed';
}

/** What every connection of one listener shares. */
export interface SessionDeps {
  wire: RtmpWireLayer;
  /** The app's stream table: RTMP publishes and plays through it (names without the leading `/`); it runs the ingest hooks. */
  streams: StreamTable;
  /** A new connection id, unique within this service (`rtmp-17`). */
  nextId: () => string;
  log: Logger;
  /** `rtmp` or `rtmps`. */
  protocol: string;
  token: string;
  /** The children's run credentials: with `token` set, a run's token opens what its command names. */
  runs?: RunCredentials;
  app: string;
  /** A player whose unsent output (its queue and its socket's) exceeds this is dropped (it cannot keep up). */
  maxPlayerBacklog: number;
  limits: WireLimits;
  /** Seconds from accept to an accepted publish or play (`rtmp.handshake_timeout_seconds`). */
  handshakeTimeout: number;
  /** Seconds without a byte either way (`rtmp.idle_timeout_seconds`). */
  idleTimeout: number;
}

/**
 * One RTMP connection: its protocol state, its own checks (name, token, app) and its bytes; the
 * stream table admits it (the ingest hooks, "name busy", the on-demand wait). While the table
 * admits a publish or play the connection is held: the socket is paused and packets already
 * parsed are kept aside; on refusal they are dropped with the socket, never reaching a player.
 *
 * Whatever goes wrong on one connection (the parser, our own code in its callbacks or after an
 * await, a timeout) ends up in `#fail`: one log line, the socket destroyed, and the close
 * handler ends its publisher or reader in the table (which tells the end hooks, once).
 */
export class RtmpSession {
  readonly id: string;
  readonly #socket: Socket;
  readonly #deps: SessionDeps;
  readonly #wire: RtmpWire;
  readonly #remote: string;
  #state: 'open' | 'checking' | 'publishing' | 'playing' | 'closed' = 'open';
  #held: MediaPacket[] = [];
  /** The stream path (`/live/abc.stream`) once publishing or playing. */
  #path?: string;
  #publisher?: StreamPublisher<'flv'>;
  #reader?: StreamReader;
  #peer?: IngestPeer;
  /** The stream the client asked for, once known (for log lines). */
  #asked?: string;
  /** A user's key `?token=<user>:<token>` where `rtmp.token` does not match (the table's admission decides it). */
  #key?: string;
  #startTimer?: NodeJS.Timeout;
  /** A player's media output, once it plays. */
  #output?: PlayerOutput;
  #rx = 0;
  #tx = 0;
  /** The request of the accepted publish or play (checked again after a reload). */
  #req?: WireRequest;
  /** Aborted when the connection closes: an admission under way then claims nothing. */
  readonly #gone = new AbortController();

  constructor(socket: Socket, deps: SessionDeps) {
    this.#socket = socket;
    this.#deps = deps;
    this.id = deps.nextId();
    this.#remote = remoteOf(socket);
    this.#wire = deps.wire.createWire({
      output: (b) => this.#write(b),
      publish: (req) => this.#guard(this.#publish(req)),
      play: (req) => this.#guard(this.#play(req)),
      packet: (p) => this.#packet(p),
    }, deps.limits);
    socket.on('data', (d: Buffer) => this.#data(d));
    socket.on('error', (err) => deps.log.debug({ id: this.id, err: err.message }, 'rtmp connection error'));
    socket.on('close', () => { this.#gone.abort(); this.#closed(); });
    this.#startTimer = setTimeout(() => this.#fail(`no publish or play within ${deps.handshakeTimeout} s (rtmp.handshake_timeout_seconds)`), deps.handshakeTimeout * 1000);
    socket.setTimeout(deps.idleTimeout * 1000);
    socket.on('timeout', () => this.#fail(`idle for ${deps.idleTimeout} s (rtmp.idle_timeout_seconds)`));
  }

  #write(b: Buffer): void {
    if (this.#socket.destroyed) return;
    this.#tx += b.length;
    this.#socket.write(b);
  }

  /** Bytes handed to the socket: the wire layer's own and a player's media. */
  #txBytes(): number {
    return this.#tx + (this.#output?.written ?? 0);
  }

  #data(d: Buffer): void {
    this.#rx += d.length;
    const err = this.#wire.feed(d);
    if (err) this.#fail(`protocol error: ${err}`);
  }

  /** Ends the connection for `reason`, with one log line (none if it is already gone). */
  #fail(reason: string): void {
    if (this.#socket.destroyed) return;
    const stream = this.#path ?? this.#asked;
    this.#deps.log.warn({ id: this.id, remote: this.#remote, protocol: this.#deps.protocol, ...(stream ? { stream } : {}) }, `rtmp connection closed: ${reason}`);
    this.#held = [];
    this.#socket.destroy();
  }

  #guard(work: Promise<void>): void {
    work.catch((err: unknown) => this.#fail(`internal error: ${err instanceof Error ? err.message : String(err)}`));
  }

  // packets parsed from the same read as `publish`, before the checks are done, wait in #held
  #packet(p: MediaPacket): void {
    if (this.#state === 'publishing') this.#forward(p);
    else if (this.#state === 'checking') this.#held.push(p);
  }

  #forward(p: MediaPacket): void {
    this.#publisher!.push(p);
  }

  /**
   * The name, token and app checks. A refusal is logged under the stream the client asked for
   * (the path before the token is taken out), unless the token was right: then under the path
   * without it, so a valid token never reaches the log.
   */
  #target(req: WireRequest, mode: 'publish' | 'play'): StreamTarget | undefined {
    const asked = requestedStream(req.app, req.name, req.query);
    if ('reason' in asked) return this.#refuse(mode, shownRequest(req.app, req.name), { reason: asked.reason, kind: 'not_found' }), undefined;
    this.#asked = asked.path;
    const target = resolveTarget(asked.path, asked.query, this.#deps.token);
    const badToken = this.#tokenProblem(target, mode);
    if (badToken) return this.#refuse(mode, asked.path, { reason: badToken.reason, kind: badToken.kind === 'bad_request' ? 'forbidden' : badToken.kind }), undefined;
    this.#asked = target.path;
    const badApp = mode === 'publish' ? checkApp(target.path, this.#deps.app) : undefined;
    if (badApp) return this.#refuse(mode, target.path, { reason: badApp.reason, kind: 'forbidden' }), undefined;
    return target;
  }

  /**
   * `rtmp.token`, or a child's run token (`?token=`) for a stream its command names in the right
   * direction (an output publishes, an input plays); a run's token never reaches the log either.
   */
  #tokenProblem(t: StreamTarget, mode: 'publish' | 'play'): NameRefusal | undefined {
    this.#key = undefined;
    const grant = this.#deps.token && t.tokenFrom === 'query' && t.token ? this.#deps.runs?.find(t.token) : undefined;
    if (!grant) {
      const bad = checkToken(t, this.#deps.token);
      // a user's key `?token=<user>:<token>` where `rtmp.token` does not match: the table's admission decides it
      if (bad && t.tokenFrom === 'query' && t.token?.includes(':')) this.#key = t.token;
      return this.#key === undefined ? bad : undefined;
    }
    if (runMayStream(grant, t.path, mode)) return undefined;
    return { kind: 'forbidden', reason: `the credential of process ${grant.processId} does not name this stream to ${mode}` };
  }

  #makePeer(t: StreamTarget): IngestPeer {
    return {
      id: this.id, protocol: this.#deps.protocol, stream: t.path, remote: this.#remote, token: t.token, ...(this.#key === undefined ? {} : { key: this.#key }),
      params: t.params, traffic: () => this.#traffic(),
    };
  }

  /** The connection's bytes (the table counts an app's share from its announce). */
  #traffic(): { rxBytes: number; txBytes: number } {
    return { rxBytes: this.#rx, txBytes: this.#txBytes() };
  }

  /**
   * A reload kept the connection and re-bound the deps to the new app: a publish or play is checked
   * again (name, token, app: one the new settings refuse ends, logged as refused) and announced
   * to the new app's hooks through the table, its bytes counted from now on; the new timeouts apply.
   */
  rebound(): void {
    if (this.#socket.destroyed) return;
    this.#socket.setTimeout(this.#deps.idleTimeout * 1000);
    const mode = this.#state === 'publishing' ? 'publish' : this.#state === 'playing' ? 'play' : undefined;
    if (!mode || !this.#req || !this.#peer) return;
    // a refusal here destroys the socket: the end hooks go to the new app, which ignores a peer it never met
    if (!this.#target(this.#req, mode)) return;
    // a user's key is decided again by the new app's access plugin (the table's rule)
    const keyed = this.#key === undefined ? undefined : this.#deps.streams.keyRefusal({ ...this.#peer, key: this.#key }, mode);
    if (keyed) return this.#refuse(mode, this.#path ?? '', keyed);
    (this.#publisher ?? this.#reader)?.announce();
  }

  /** Holds the connection while the table admits it: nothing is read from the socket meanwhile. */
  #hold(): AbortSignal {
    this.#state = 'checking';
    this.#socket.pause();
    return this.#gone.signal;
  }

  /** A refusal of the table: logged, unless the connection went away meanwhile (nobody to refuse). */
  #refused(mode: string, path: string, r: StreamRefusal): void {
    if (r.code === 'STREAM_GONE' || this.#socket.destroyed) return;
    this.#refuse(mode, path, r);
  }

  /** A publish or play was accepted: no start deadline any more. */
  #started(state: 'publishing' | 'playing', path: string, peer: IngestPeer): void {
    clearTimeout(this.#startTimer);
    this.#path = path;
    this.#peer = peer;
    this.#state = state;
    this.#deps.log.info({ id: this.id, remote: this.#remote, stream: path, protocol: this.#deps.protocol }, `rtmp ${state === 'publishing' ? 'publish' : 'play'} started`);
  }

  async #publish(req: WireRequest): Promise<void> {
    if (this.#state !== 'open') return this.#refuse('publish', this.#asked ?? shownRequest(req.app, req.name), { reason: 'one stream per connection', kind: 'conflict' });
    const t = this.#target(req, 'publish');
    if (!t) return;
    const peer = this.#makePeer(t);
    const pub = await this.#deps.streams.publish(streamName(t.path), 'flv', peer, { signal: this.#hold() });
    if (!pub.ok) return this.#refused('publish', t.path, pub);
    this.#publisher = pub.handle;
    this.#req = req;
    const err = this.#wire.accepted('publish');
    if (err) return this.#fail(`protocol error: ${err}`);
    this.#started('publishing', t.path, peer);
    const held = this.#held;
    this.#held = [];
    for (const p of held) this.#forward(p);
    this.#socket.resume();
  }

  async #play(req: WireRequest): Promise<void> {
    if (this.#state !== 'open') return this.#refuse('play', this.#asked ?? shownRequest(req.app, req.name), { reason: 'one stream per connection', kind: 'conflict' });
    const t = this.#target(req, 'play');
    if (!t) return;
    const peer = this.#makePeer(t);
    // the start batch comes with the table's accept: the output is there before it can arrive
    this.#output = new PlayerOutput(this.#socket, this.#deps.maxPlayerBacklog, this.#deps.wire.wireOf);
    this.#path = t.path;
    // the success statuses go before the first media (the start batch may come with the accept)
    let told = false;
    const tell = () => told || (told = true, this.#wire.accepted('play') === null);
    const sink = { send: (b: readonly FlvPacket[]) => tell() && this.#send(b), stop: (why: StreamStopReason) => this.#stop(why) };
    // a stream published on demand (an on-demand process) is started for this player, who waits for it there
    const read = await this.#deps.streams.read(streamName(t.path), 'flv', peer, sink, { signal: this.#hold() });
    if (!read.ok) {
      this.#output = undefined;
      return this.#refused('play', t.path, read);
    }
    this.#reader = read.handle;
    this.#req = req;
    if (!tell()) return this.#fail('protocol error: the play statuses could not be sent');
    this.#started('playing', t.path, peer);
    this.#socket.resume();
  }

  /** Writes to a player, dropping it when it is too far behind to ever catch up. */
  #send(batch: readonly FlvPacket[]): boolean {
    if (this.#output!.send(batch)) return true;
    if (!this.#socket.destroyed) {
      this.#deps.log.warn({ id: this.id, remote: this.#remote, stream: this.#path }, 'rtmp player too slow; dropped');
      this.#socket.destroy();
    }
    return false;
  }

  /** The publisher left: the reference's stop statuses, then end of the connection; a dropped player is gone already. */
  #stop(why: StreamStopReason): void {
    if (why === 'dropped') {
      if (!this.#socket.destroyed) this.#fail('dropped by the stream (its connection failed)');
      return;
    }
    // what the player was still owed, before the statuses and the end
    this.#output?.flush(true);
    const err = this.#wire.status('status', 'NetStream.Play.UnpublishNotify', 'stream is now unpublished')
      ?? this.#wire.status('status', 'NetStream.Play.Stop', 'stopped playing stream');
    if (err) return this.#fail(`protocol error: ${err}`);
    this.#socket.end();
  }

  /** One log line naming the stream the client asked for and why, its error status, then the connection ends. */
  #refuse(mode: string, stream: string, r: IngestRefusal): void {
    this.#deps.log.warn({ id: this.id, remote: this.#remote, stream, kind: r.kind ?? 'forbidden', protocol: this.#deps.protocol, reason: r.reason }, `rtmp ${mode} refused: ${r.reason}`);
    this.#held = [];
    const socket = this.#socket;
    if (socket.destroyed) return;
    // nothing more is read (a refused publisher's media goes nowhere); the status is flushed, then the socket goes
    socket.pause();
    if (this.#wire.status('error', refusalStatus(mode, r.kind), r.reason) !== null) return void socket.destroy();
    socket.end();
    setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
  }

  /** Exactly once per connection: its publisher ends or its reader leaves (the table tells the end hooks). */
  #closed(): void {
    clearTimeout(this.#startTimer);
    this.#wire.close();
    const was = this.#state;
    this.#state = 'closed';
    this.#held = [];
    const traffic = this.#traffic();
    if (was === 'publishing' && this.#publisher) {
      this.#publisher.end();
      this.#deps.log.info({ id: this.id, stream: this.#path, ...traffic }, 'rtmp publish ended');
    } else if (was === 'playing' && this.#reader) {
      this.#reader.leave();
      this.#deps.log.info({ id: this.id, stream: this.#path, ...traffic }, 'rtmp play ended');
    }
  }
}
