import { PassThrough } from 'node:stream';
import { askIngest, tellIngest, NETWORK, PUBLIC, ingestHooksRef, type HttpScope, type SessionsService } from '@media-core/sdk';
import { acceptRawBodies, clientAddress, ignoreContentType } from '@media-core/sdk/toolkit';
import { httptsErrors } from './errors.ts';
import { httpPeer } from './peer.ts';
import { streamViews, type StreamHub, type StreamReader } from './streams.ts';
import type { HttpTsConfig } from './schema.ts';

/** The ingest hooks as the app holds them. */
export type IngestHooks = Readonly<ReturnType<typeof ingestHooksRef.create>>;

export interface RouteDeps {
  cfg: HttpTsConfig;
  hub: StreamHub;
  hooks: IngestHooks;
  sessions: SessionsService | undefined;
  /** The key `{httpts}` puts into the URLs it hands to processes; reads without it are refused. */
  key: string;
  log: { warn(obj: object, msg: string): void };
}

type Params = { name: string };
type Query = Record<string, string>;

/**
 * The ingest routes: `PUT|POST <path>/<name>` takes a publisher's MPEG-TS body for as long as it
 * sends (chunked), `GET <path>/<name>?key=..` streams it to a reader (a process, through the
 * placeholder), `GET /api/v3/httpts` lists the live streams.
 */
export async function httpTsRoutes(http: HttpScope, d: RouteDeps): Promise<void> {
  const names = new RegExp(d.cfg.names);
  const onError = (err: Error) => d.log.warn({ err }, 'an ingest hook tap failed');

  await http.register(async (scope: HttpScope) => {
    // a stream is one long body: no parser, no body limit; it goes to the hub as it arrives
    acceptRawBodies(scope);
    scope.route<{ Params: Params; Querystring: Query }>({
      method: ['PUT', 'POST'], url: `${d.cfg.path}/:name`, config: NETWORK, onRequest: ignoreContentType,
      handler: async (request) => {
        const { name } = request.params;
        if (!names.test(name)) throw httptsErrors.badName(name);
        const peer = httpPeer(name, clientAddress(request), request.socket?.remotePort, request.query);
        const refusal = await askIngest(d.hooks.prePublish, peer);
        if (refusal) throw httptsErrors.refused(refusal);
        const stream = d.hub.open(name, peer);
        tellIngest(d.hooks.onPublish, onError, peer);
        try {
          // a publisher that disconnects mid-body ends the loop with an error: the stream ends too
          for await (const chunk of request.raw as AsyncIterable<Buffer>) {
            peer.counts.rxBytes += chunk.length;
            d.hub.push(stream, chunk);
          }
        } finally {
          d.hub.close(stream);
          tellIngest(d.hooks.onPublishEnd, onError, peer, peer.traffic());
        }
        return { name, bytes: peer.counts.rxBytes };
      },
    });
  });

  http.get<{ Params: Params; Querystring: Query }>(`${d.cfg.path}/:name`, { config: PUBLIC }, async (request, reply) => {
    const { name } = request.params;
    if (request.query.key !== d.key) throw httptsErrors.badKey();
    if (!names.test(name)) throw httptsErrors.badName(name);
    const peer = httpPeer(name, clientAddress(request), request.socket?.remotePort, request.query);
    const refusal = (await askIngest(d.hooks.prePlay, peer)) ?? admission(d.sessions);
    if (refusal) throw httptsErrors.refused(refusal);
    const out = new PassThrough();
    const limit = d.cfg.reader_buffer_kbytes * 1024;
    let ended = false;
    const reader: StreamReader = {
      peer,
      write: (chunk) => {
        if (out.writableLength > limit) return false;
        peer.counts.txBytes += chunk.length;
        out.write(chunk);
        return true;
      },
      end: () => {
        if (ended) return;
        ended = true;
        out.end();
        tellIngest(d.hooks.onPlayEnd, onError, peer, peer.traffic());
      },
    };
    const stream = d.hub.attach(name, reader);
    tellIngest(d.hooks.onPlay, onError, peer);
    // the reading process went away: stop queueing for it
    reply.raw.once('close', () => d.hub.detach(stream, reader));
    return reply.type('video/mp2t').send(out);
  });

  http.get('/api/v3/httpts', async () => streamViews(d.hub));
}

/** The sessions registry's limits (`sessions.max_sessions`, `max_bitrate_mbit`) for a new reader. */
function admission(sessions: SessionsService | undefined) {
  const why = sessions?.collector('httpts').admission();
  return why ? { reason: why, kind: 'overloaded' as const } : undefined;
}
