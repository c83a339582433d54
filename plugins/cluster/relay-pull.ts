import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { TsCutter, type HttpForwarder, type IngestPeer, type StreamPublisher, type StreamTable } from '../../sdk/index.ts';
import type { Log } from './connection.ts';

/** The cluster-internal route a node pulls another node's stream from (`relay-route.ts`). */
export const RELAY_PATH = '/api/v3/cluster/stream';
/** The ingest protocol of a stream a relay publishes, and of the reader that feeds it on the other node. */
export const RELAY_PROTOCOL = 'cluster';

/** The path and query that pull stream `name`. */
export const relayUrl = (name: string): string => `${RELAY_PATH}?name=${encodeURIComponent(name)}`;

/** A node another one pulls from. */
export interface RelaySource {
  node: string;
  /** Its `api_address`. */
  base: string;
}

export interface PullOptions {
  name: string;
  from: RelaySource;
  streams: StreamTable;
  http: HttpForwarder;
  /** The hop and signed headers of one request for `url` to `from` (a new nonce each time). */
  headers(url: string): OutgoingHttpHeaders;
  /** No answer with the stream's first bytes within this: the pull fails. */
  firstByteMs: number;
  /** The stream had no readers this long: the pull ends. */
  idleMs: number;
  /** How often the readers are counted. */
  checkMs: number;
  log: Log;
  /** Called once when the pull is over (whatever ended it). */
  onEnd(why: string): void;
}

let seq = 0;

/**
 * One relay on the node asked: a GET of `RELAY_PATH` on the node that has the stream, published
 * into this node's table as `mpegts` by a peer of protocol `cluster` once the answer is 200. It
 * ends when the other node's stream ends (the answer ends), when the stream here had no readers
 * for `idleMs`, when the answer fails or is late, or on `stop`.
 */
export class RelayPull {
  readonly #o: PullOptions;
  #req: ClientRequest | undefined;
  #pub: StreamPublisher<'mpegts'> | undefined;
  #firstByte: NodeJS.Timeout | undefined;
  #check: NodeJS.Timeout | undefined;
  #idleSince = 0;
  #rx = 0;
  #ended = false;

  constructor(o: PullOptions) { this.#o = o; }

  /** Whether the stream is published here (the answer came). */
  get live(): boolean { return this.#pub !== undefined; }

  start(): void {
    const o = this.#o;
    const url = relayUrl(o.name);
    const req = o.http.request(o.from.base, 'GET', url, o.headers(url), (res) => this.#answer(res));
    this.#req = req;
    req.on('error', (err) => this.#end(`failed: ${err.message}`));
    req.on('close', () => this.#end('closed'));
    this.#firstByte = setTimeout(() => this.#end(`no stream within ${o.firstByteMs} ms`), o.firstByteMs);
    req.end();
  }

  #answer(res: IncomingMessage): void {
    const o = this.#o;
    if (res.statusCode !== 200) { res.resume(); this.#end(`node ${o.from.node} answered ${res.statusCode}`); return; }
    // internal: the relay is the service's own publisher (its readers were admitted where they read)
    const pub = o.streams.publish(o.name, 'mpegts', this.#peer(), { internal: true });
    if (!pub.ok) { res.resume(); this.#end(`not published here: ${pub.reason}`); return; }
    this.#pub = pub.handle;
    this.#idleSince = performance.now();
    this.#check = setInterval(() => this.#idle(), o.checkMs);
    const cutter = new TsCutter();
    res.on('data', (chunk: Buffer) => {
      clearTimeout(this.#firstByte);
      this.#rx += chunk.length;
      try {
        const packets = cutter.cut(chunk);
        if (packets) pub.handle.push(packets);
      } catch (err) {
        this.#end((err as Error).message);
      }
    });
    res.on('end', () => this.#end('ended on the other node'));
    res.on('error', (err) => this.#end(`failed: ${err.message}`));
  }

  #idle(): void {
    const now = performance.now();
    if ((this.#o.streams.get(this.#o.name)?.readers.length ?? 0) > 0) this.#idleSince = now;
    else if (now - this.#idleSince >= this.#o.idleMs) this.#end('no readers');
  }

  #peer(): IngestPeer {
    const { from, name } = this.#o;
    let remote = from.base;
    try { remote = new URL(from.base).host; } catch { /* as given */ }
    return { id: `cluster-${++seq}`, protocol: RELAY_PROTOCOL, stream: name, remote, params: { node: from.node }, traffic: () => ({ rxBytes: this.#rx, txBytes: 0 }) };
  }

  /** Ends the relay (the stream here ends, the request to the other node is cut). */
  stop(why = 'stopped'): void { this.#end(why); }

  #end(why: string): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#firstByte);
    clearInterval(this.#check);
    this.#pub?.end();
    this.#req?.destroy();
    this.#o.log.info({ stream: this.#o.name, node: this.#o.from.node, why }, 'cluster: stream relay ended');
    this.#o.onEnd(why);
  }
}
