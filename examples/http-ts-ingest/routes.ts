import { PassThrough } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { streamName, NETWORK, PUBLIC, type HttpScope, type StreamPublisher, type StreamRefusal, type StreamTable } from '@media-core/sdk';
import { acceptRawBodies, clientAddress, ignoreContentType } from '@media-core/sdk/toolkit';
import { atBoundary, BodyLost, reasonOf, type BoundaryLog } from './boundary.ts';
import { httptsErrors } from './errors.ts';
import { httpPeer, type CountedPeer } from './peer.ts';
import { streamViews } from './views.ts';
import { TsPackets } from './ts-packets.ts';
import type { HttpTsConfig } from './schema.ts';

export interface RouteDeps {
  cfg: HttpTsConfig;
  /**
   * The service's stream table: this plugin publishes and reads there (names as in the URL), and
   * it admits each client (the ingest hooks: this plugin's token and session rules, a vendor's).
   */
  streams: StreamTable;
  /** This plugin's live publishers (ended at shutdown). */
  publishers: Set<StreamPublisher<'mpegts'>>;
  /** The key `{httpts}` puts into the URLs it hands to processes; reads without it are refused. */
  key: string;
  log: BoundaryLog;
}

type Params = { name: string };
type Query = Record<string, string>;

/**
 * The ingest routes: `PUT|POST <path>/<name>` takes a publisher's MPEG-TS body for as long as it
 * sends (chunked), `GET <path>/<name>?key=..` streams it to a reader (a process, through the
 * placeholder), `GET /api/v3/httpts` lists the live streams. Each handler is the fault boundary
 * of its connection (boundary.ts).
 */
export async function httpTsRoutes(http: HttpScope, d: RouteDeps): Promise<void> {
  const names = new RegExp(d.cfg.names);

  await http.register(async (scope: HttpScope) => {
    // a stream is one long body: no parser, no body limit; it goes to the stream table as it arrives
    acceptRawBodies(scope);
    scope.route<{ Params: Params; Querystring: Query }>({
      method: ['PUT', 'POST'], url: `${d.cfg.path}/:name`, config: NETWORK, onRequest: ignoreContentType,
      handler: async (request, reply) => {
        const peer = httpPeer(request.params.name, clientAddress(request), request.socket?.remotePort, request.query);
        try {
          if (!names.test(peer.stream)) throw httptsErrors.badName(peer.stream);
          return await publish(d, peer, request.raw, reply.raw);
        } catch (err) {
          throw atBoundary(d.log, 'publish', peer, err);
        }
      },
    });
  });

  http.get<{ Params: Params; Querystring: Query }>(`${d.cfg.path}/:name`, { config: PUBLIC }, async (request, reply) => {
    const peer = httpPeer(request.params.name, clientAddress(request), request.socket?.remotePort, request.query);
    try {
      if (request.query.key !== d.key) throw httptsErrors.badKey();
      if (!names.test(peer.stream)) throw httptsErrors.badName(peer.stream);
      const out = await play(d, peer, reply.raw);
      return reply.type('video/mp2t').send(out);
    } catch (err) {
      throw atBoundary(d.log, 'play', peer, err);
    }
  });

  http.get('/api/v3/httpts', async () => streamViews(d.streams));
}

/** A refusal of the stream table (its rules, or an ingest tap's) as this plugin's error. */
function tableError(r: StreamRefusal, name: string, max: number) {
  if (r.code === 'STREAM_BUSY') return httptsErrors.busy(name);
  if (r.code === 'STREAM_LIMIT') return httptsErrors.full(max);
  if (r.code === 'STREAM_NOT_FOUND') return httptsErrors.notLive(name);
  return httptsErrors.refused(r);
}

/** One publisher: its body goes to the stream table, whole TS packets, until it ends or breaks off. */
async function publish(d: RouteDeps, peer: CountedPeer, body: IncomingMessage, res: ServerResponse): Promise<{ name: string; bytes: number }> {
  const opened = await d.streams.publish(streamName(peer.stream), 'mpegts', peer, { maxStreamsOfProtocol: d.cfg.max_streams });
  if (!opened.ok) throw tableError(opened, peer.stream, d.cfg.max_streams);
  const stream = opened.handle;
  d.publishers.add(stream);
  const packets = new TsPackets();
  // a connection closed under an unfinished body (the core's idle cut answers 408 first, which
  // takes the request off node's list: its body would wait for ever) ends the body too
  const cut = () => { if (!body.complete) body.destroy(new BodyLost(bodyLostReason(undefined, res))); };
  res.once('close', cut);
  try {
    const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (err) {
        throw err instanceof BodyLost ? err : new BodyLost(bodyLostReason(err, res));
      }
      if (next.done) break;
      peer.counts.rxBytes += next.value.length;
      const whole = packets.take(next.value);
      if (whole) stream.push(whole);
    }
  } catch (err) {
    // not the body's own failure: the rest of it is not read either, the connection ends
    if (!(err instanceof BodyLost)) body.destroy();
    throw err;
  } finally {
    res.off('close', cut);
    d.publishers.delete(stream);
    stream.end();
  }
  return { name: peer.stream, bytes: peer.counts.rxBytes };
}

/** Why a publisher's body ended early: the core's idle cut (it answered 408), or what the socket said. */
function bodyLostReason(err: unknown, res: ServerResponse): string {
  if (res.headersSent && res.statusCode === 408) return 'no byte of the stream arrived within http.body_timeout_seconds';
  return err === undefined ? 'the connection closed before the stream ended' : `the stream broke off: ${reasonOf(err)}`;
}

/**
 * One reader: a queue in front of its response. A reader more than `reader_buffer_kbytes` behind
 * is cut (its socket destroyed: the queued bytes go at once, and the process reconnects); so is
 * one whose write throws (the table drops it).
 */
async function play(d: RouteDeps, peer: CountedPeer, res: ServerResponse): Promise<PassThrough> {
  const out = new PassThrough();
  const limit = d.cfg.reader_buffer_kbytes * 1024;
  const where = { remote: peer.remote, protocol: 'httpts', stream: peer.stream };
  let slow = false;
  const read = await d.streams.read(streamName(peer.stream), 'mpegts', peer, {
    send: (batch) => {
      if (out.writableLength > limit) {
        d.log.warn(where, `httpts connection closed: the reader is more than ${d.cfg.reader_buffer_kbytes} KiB behind (reader_buffer_kbytes)`);
        slow = true;
        return false;
      }
      for (const chunk of batch) {
        peer.counts.txBytes += chunk.length;
        out.write(chunk);
      }
      return true;
    },
    stop: (why) => {
      if (why === 'dropped') {
        // not the backlog: its write threw
        if (!slow) d.log.warn(where, 'httpts connection failed: its write failed');
        res.destroy();
      }
      out.end();
    },
  });
  if (!read.ok) throw tableError(read, peer.stream, d.cfg.max_streams);
  // the reading process went away: stop queueing for it (the table tells the end hook)
  res.once('close', () => { read.handle.leave(); out.end(); });
  return out;
}
