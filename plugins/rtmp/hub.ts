import type { MediaPacket } from './nms-adapter.ts';

/*
 * The streams being published, per plugin instance (no module state: two services in one
 * process, or the old and new app of a reload, never share streams). A channel keeps what a new
 * player needs to start at once: metadata, codec headers and the packets since the last keyframe.
 */

/** A player as the hub sees it: somewhere to write RTMP chunks. */
export interface ChannelPlayer {
  readonly id: string;
  /**
   * Writes a batch of messages (the channel's own Buffers, shared by every player: not to be
   * changed or kept past the write); false when the player is too far behind and was dropped.
   */
  send(batch: readonly Buffer[]): boolean;
  /** The publisher left: tell the player and end its connection. */
  stop(): void;
}

/** A GOP cache never holds more than this many packets (a stream with no keyframes). */
const GOP_CAP = 4096;
/** Nor more than this many bytes (a publisher sending huge frames between rare keyframes). */
const GOP_BYTES_CAP = 64 * 1024 * 1024;

export class Channel {
  readonly path: string;
  /** The publisher's connection id. */
  readonly publisherId: string;
  readonly publisherRemote: string;
  readonly since = Date.now();
  metadata: Record<string, unknown> = {};
  videoCodec = 0;
  audioCodec = 0;
  #players = new Map<string, ChannelPlayer>();
  #meta?: Buffer;
  #audioHeader?: Buffer;
  #videoHeader?: Buffer;
  #gop: Buffer[] = [];
  #gopBytes = 0;
  #closed = false;
  /** This tick's packets, written to every player at once on the next tick (one writev each). */
  #batch: Buffer[] = [];

  constructor(path: string, publisherId: string, publisherRemote: string) {
    this.path = path;
    this.publisherId = publisherId;
    this.publisherRemote = publisherRemote;
  }

  get players(): number {
    return this.#players.size;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** A publisher's packet: stored as needed and written to every player. */
  push(p: MediaPacket): void {
    switch (p.kind) {
      case 'metadata': this.#meta = p.wire; break;
      case 'audio-header': this.#audioHeader = p.wire; this.audioCodec = p.codec; break;
      case 'video-header': this.#videoHeader = p.wire; this.videoCodec = p.codec; break;
      case 'keyframe': this.#gop = [p.wire]; this.#gopBytes = p.wire.length; break;
      case 'frame':
        // frames before the first keyframe cannot start a decoder; audio-only streams have none
        if (this.#gop.length > 0 || !this.#videoHeader) {
          this.#gop.push(p.wire);
          this.#gopBytes += p.wire.length;
        }
        if (this.#gop.length > GOP_CAP || this.#gopBytes > GOP_BYTES_CAP) {
          this.#gop = [];
          this.#gopBytes = 0;
        }
        break;
    }
    if (this.#players.size === 0) return;
    this.#batch.push(p.wire);
    if (this.#batch.length === 1) process.nextTick(this.#flush);
  }

  /** The packets of this tick so far, to every player (a player that fails is dropped). */
  #flush = (): void => {
    const batch = this.#batch;
    if (batch.length === 0) return;
    this.#batch = [];
    for (const player of this.#players.values()) {
      if (!Channel.#deliver(player, batch)) this.#players.delete(player.id);
    }
  };

  /** Packets held by this channel for new players and for this tick's writes. */
  get held(): { gop: number; gopBytes: number; batch: number } {
    return { gop: this.#gop.length, gopBytes: this.#gopBytes, batch: this.#batch.length };
  }

  /** One player's failure is its own: it is dropped, the publisher and the other players go on. */
  static #deliver(player: ChannelPlayer, batch: readonly Buffer[]): boolean {
    try {
      return player.send(batch);
    } catch {
      Channel.#end(player);
      return false;
    }
  }

  static #end(player: ChannelPlayer): void {
    try {
      player.stop();
    } catch {
      // the player's own connection handles its errors; nothing more to do for it here
    }
  }

  /** Adds a player, starting it with the stored headers and the current GOP. */
  join(player: ChannelPlayer): void {
    if (this.#closed) return Channel.#end(player);
    // the players already there get this tick's packets first: they are in the GOP the new one gets
    this.#flush();
    const start = [this.#meta, this.#audioHeader, this.#videoHeader, ...this.#gop].filter((b) => b !== undefined);
    if (Channel.#deliver(player, start)) this.#players.set(player.id, player);
  }

  leave(playerId: string): void {
    this.#players.delete(playerId);
  }

  /** The publisher is gone: every player is told at once, so a puller ends instead of waiting. */
  close(): void {
    this.#flush();
    this.#closed = true;
    const players = [...this.#players.values()];
    this.#players.clear();
    this.#gop = [];
    this.#gopBytes = 0;
    this.#meta = this.#audioHeader = this.#videoHeader = undefined;
    for (const p of players) Channel.#end(p);
  }
}

/** The channels of one RTMP service, keyed by path. */
export class Hub {
  #channels = new Map<string, Channel>();
  #seq = 0;

  /** A new connection id, unique within this service. */
  nextId(): string {
    return `rtmp-${++this.#seq}`;
  }

  get(path: string): Channel | undefined {
    return this.#channels.get(path);
  }

  /** Makes `publisherId` the publisher of `path`; undefined when the path already has one. */
  claim(path: string, publisherId: string, publisherRemote: string): Channel | undefined {
    if (this.#channels.has(path)) return undefined;
    const ch = new Channel(path, publisherId, publisherRemote);
    this.#channels.set(path, ch);
    return ch;
  }

  /** Ends a channel: unlisted first, then its players stopped. */
  release(ch: Channel): void {
    if (this.#channels.get(ch.path) === ch) this.#channels.delete(ch.path);
    ch.close();
  }

  list(): Channel[] {
    return [...this.#channels.values()];
  }
}
