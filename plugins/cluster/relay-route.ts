import type { FastifyRequest } from 'fastify';
import { ApiError, PUBLIC, Type, streamName, type HttpScope, type IngestPeer, type StreamTable } from '../../sdk/index.ts';
import type { Log } from './connection.ts';
import { HOP_HEADER } from './peer.ts';
import { RELAY_PATH, RELAY_PROTOCOL } from './relay-pull.ts';

/** How long a pull waits here for the stream (an on-demand process starting), before 404. */
export const RELAY_WAIT_MS = 12_000;
/** A pull this far behind (bytes queued on its connection) is dropped, as the table drops slow readers. */
export const RELAY_MAX_QUEUE = 4 * 1024 * 1024;

export interface RelayRouteOptions {
  streams: StreamTable;
  /** The request came from another node: its signed cluster header checked out (`PeerKey.vouched`). */
  vouched(request: FastifyRequest): boolean;
  /** Runs a table call with this node's relay source answering nothing (a pulled name is never pulled on). */
  quiet<T>(fn: () => T): T;
  log: Log;
  waitMs?: number;
}

const relayErrors = {
  forbidden: () => new ApiError(403, 'Forbidden', ['only for the nodes of the cluster'], 'CLUSTER_FORBIDDEN'),
  notFound: (name: string) => new ApiError(404, 'Not Found', [`no stream ${name} on this node`], 'STREAM_NOT_FOUND'),
};

let seq = 0;

/**
 * `GET /api/v3/cluster/stream?name=<name>`: a stream of this node as MPEG-TS for another node's
 * relay (`relay-pull.ts`). Public for the front door (the pulling node has no user credential)
 * but answered only for a request with the hop header whose signed client header checked out
 * (403 `CLUSTER_FORBIDDEN` otherwise). Waits for the name with `whenPublished` (an on-demand
 * process starts here), then serves it from a table reader of `mpegts`: the reader leaves when
 * the connection closes, and a connection that falls `RELAY_MAX_QUEUE` behind is dropped. A
 * name nothing here publishes, or one a relay publishes here, is 404 `STREAM_NOT_FOUND`.
 */
export function relayRoute(http: HttpScope, o: RelayRouteOptions): void {
  http.get(RELAY_PATH, {
    config: PUBLIC,
    schema: {
      summary: 'Cluster-internal: a stream of this node as MPEG-TS for another node\'s relay (signed node requests only)', tags: ['cluster'],
      querystring: Type.Object({ name: Type.String({ minLength: 1 }) }),
    },
  }, async (request, reply) => {
    if (request.headers[HOP_HEADER] === undefined || !o.vouched(request)) throw relayErrors.forbidden();
    const name = streamName(request.query.name);
    const wait = o.waitMs ?? RELAY_WAIT_MS;
    const ok = await o.quiet(() => o.streams.whenPublished(name, wait));
    const info = o.streams.get(name);
    if (!ok || !info || info.publisher.protocol === RELAY_PROTOCOL) throw relayErrors.notFound(name);
    reply.hijack();
    const res = reply.raw;
    let tx = 0;
    const from = String(request.headers[HOP_HEADER]);
    const peer: IngestPeer = {
      id: `cluster-out-${++seq}`, protocol: RELAY_PROTOCOL, stream: name, params: { node: from },
      remote: `${request.socket.remoteAddress ?? ''}:${request.socket.remotePort ?? 0}`, traffic: () => ({ rxBytes: 0, txBytes: tx }),
    };
    // internal: another node's relay, admitted there (its clients ran that node's hooks)
    const r = o.streams.read(name, 'mpegts', peer, {
      send: (batch) => {
        if (!res.headersSent) res.writeHead(200, { 'content-type': 'video/mp2t', 'cache-control': 'no-store' });
        for (const b of batch) { tx += b.length; res.write(b); }
        return res.writableLength < RELAY_MAX_QUEUE;
      },
      stop: (why) => {
        if (why === 'ended') { res.end(); return; }
        o.log.warn({ stream: name, node: from }, 'cluster: a slow relay was dropped');
        res.destroy();
      },
    }, { internal: true });
    if (!r.ok) {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(relayErrors.notFound(name).toBody()));
      return;
    }
    // no packet yet (a late reader starts at a random access point): the headers go now
    if (!res.headersSent) res.writeHead(200, { 'content-type': 'video/mp2t', 'cache-control': 'no-store' });
    res.once('close', () => r.handle.leave());
  });
}
