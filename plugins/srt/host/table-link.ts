import type { Socket } from 'node:net';
import { streamName, type IngestPeer, type StreamPublisher, type StreamReader, type StreamRefusal, type StreamTable } from '../../../sdk/index.ts';
import type { SrtChannels } from '../relay.ts';
import { PipeDrops, writeFrame } from './media-pipe.ts';
import { DELIVER } from './protocol.ts';
import type { SrtMode } from '../streamid.ts';

/** One claimed connection of the host: its socket id and its table handle. */
type Claim = { sock: number; peer: IngestPeer } & ({ publisher: StreamPublisher<'mpegts'> } | { reader: StreamReader });

/**
 * The service's side of the SRT host's streams: its claims on the stream table (publishers and
 * readers by connection id), the publishers' chunks into the table, and the table's chunks out to
 * the host, one frame per chunk for all SRT readers it goes to (the Buffer is shared, as in the table).
 */
export class HostStreams {
  readonly #table: StreamTable;
  /** How long the ingest checks may take (`srt.handshake_timeout_seconds`). */
  readonly #checkMs: number;
  readonly #claims = new Map<string, Claim>();
  /** Claims under way, by connection id: a release aborts one (the table then takes nothing). */
  readonly #pending = new Map<string, AbortController>();
  readonly #bySock = new Map<number, StreamPublisher<'mpegts'>>();
  /** This tick's chunks for the host: each Buffer once, with the subscribers it goes to. */
  #outbox = new Map<Buffer, number[]>();
  #pipe: Socket | undefined;
  readonly #kick: (sock: number, why: string) => void;
  /** Chunks the host's pipe could not take (it is stuck): counted and logged. */
  readonly drops: PipeDrops;

  constructor(table: StreamTable, checkMs: number, kick: (sock: number, why: string) => void, warn: (fields: Record<string, unknown>, msg: string) => void) {
    this.#table = table;
    this.#checkMs = checkMs;
    this.#kick = kick;
    this.drops = new PipeDrops('service -> SRT host', warn);
  }

  /** The pipe of the host now running (a new one after a restart). */
  attach(pipe: Socket | undefined): void {
    this.#pipe = pipe;
  }

  /**
   * Publish or read in the table, which admits (the ingest hooks within the handshake timeout; a
   * reader of a name nothing publishes waits for a publisher a demand source starts); its refusal.
   * A release meanwhile, or the host's end, aborts it: the table takes nothing.
   */
  async claim(mode: SrtMode, sock: number, peer: IngestPeer): Promise<StreamRefusal | undefined> {
    const name = streamName(peer.stream);
    const gone = new AbortController();
    this.#pending.set(peer.id, gone);
    const opts = { signal: gone.signal, checkTimeoutMs: this.#checkMs };
    try {
      if (mode === 'publish') {
        const r = await this.#table.publish(name, 'mpegts', peer, opts);
        if (!r.ok) return r;
        this.#claims.set(peer.id, { sock, peer, publisher: r.handle });
        this.#bySock.set(sock, r.handle);
        return undefined;
      }
      const r = await this.#table.read(name, 'mpegts', peer, {
        send: (batch) => this.#queue(sock, batch),
        // the host closes the connection; its release leaves, which tells the end hook
        stop: (why) => this.#kick(sock, why === 'ended' ? 'publisher gone' : 'dropped by the stream'),
      }, opts);
      if (!r.ok) return r;
      this.#claims.set(peer.id, { sock, peer, reader: r.handle });
      return undefined;
    } finally {
      this.#pending.delete(peer.id);
    }
  }

  /** After a reload kept the host: its claims to the new app's hooks (bytes counted from now on). */
  announce(): void {
    for (const c of this.#claims.values()) ('publisher' in c ? c.publisher : c.reader).announce();
  }

  /** A publisher's chunk from the host. */
  published(sock: number, chunk: Buffer): void {
    this.#bySock.get(sock)?.push(chunk);
  }

  #queue(sock: number, batch: readonly Buffer[]): boolean {
    if (!this.#pipe || this.#pipe.destroyed) return false;
    if (this.#outbox.size === 0) queueMicrotask(this.#flush);
    for (const b of batch) {
      const socks = this.#outbox.get(b);
      if (socks) socks.push(sock);
      else this.#outbox.set(b, [sock]);
    }
    return true;
  }

  #flush = (): void => {
    const out = this.#outbox;
    this.#outbox = new Map();
    const pipe = this.#pipe;
    if (!pipe) return;
    for (const [chunk, socks] of out) this.drops.note(writeFrame(pipe, DELIVER, socks, chunk), chunk.length);
  };

  /** A connection ended in the host: its claim under way is aborted, its claim ends. */
  release(id: string): void {
    this.#pending.get(id)?.abort();
    const c = this.#claims.get(id);
    if (!c) return;
    this.#claims.delete(id);
    if ('publisher' in c) {
      this.#bySock.delete(c.sock);
      c.publisher.end();
    } else {
      c.reader.leave();
    }
  }

  /** The host ended: every stream it published ends, every reading it had stops. */
  releaseAll(): void {
    for (const id of [...this.#pending.keys(), ...this.#claims.keys()]) this.release(id);
    this.#outbox.clear();
  }

  /**
   * GET /api/v3/srt: the streams from the table (SRT publishers, and SRT readers of any stream),
   * each connection's log and statistics from the host (`fromHost`).
   */
  listing(fromHost: SrtChannels): SrtChannels {
    const out: SrtChannels = { publisher: {}, subscriber: {}, connections: {}, log: fromHost.log };
    const add = (c: Claim) => {
      const conn = fromHost.connections[String(c.sock)];
      if (conn) out.connections[String(c.sock)] = conn;
    };
    for (const s of this.#table.list()) {
      const pub = this.#claims.get(s.publisher.id);
      const readers = s.readers.map((r) => this.#claims.get(r.peer.id)).filter((c) => c !== undefined);
      if (!pub && readers.length === 0) continue;
      // SRT's name of the stream: the resource as its publisher (or first reader) gave it
      const key = (pub ?? readers[0]!).peer.stream;
      if (pub) {
        out.publisher[key] = pub.sock;
        add(pub);
      }
      out.subscriber[key] = readers.map((c) => c.sock);
      readers.forEach(add);
    }
    return out;
  }
}
