import { randomBytes } from 'node:crypto';
import {
  definePlugin, ingestHooksRef, optional, placeholdersRef, serverRef, streamTableRef, type StreamPublisher,
} from '@media-core/sdk';
import { graphqlSchemaRef } from '@media-core/plugins/graphql/api';
import { metricCollectorsRef } from '@media-core/plugins/metrics/api';
import { sessionsRef } from '@media-core/plugins/sessions/api';
import { HttpTsConfig, validateConfig } from './schema.ts';
import { httpTsRoutes } from './routes.ts';
import { httpTsMetrics } from './metrics.ts';
import { httpTsGraphql } from './graphql.ts';

/**
 * HTTP MPEG-TS ingest, a vendor plugin written against `@media-core/sdk` (and the sessions, metrics and
 * GraphQL contracts, `@media-core/plugins/<name>/api`): publishers push a
 * stream with `PUT`/`POST <path>/<name>` (a chunked body, e.g. `ffmpeg -f mpegts -method PUT`),
 * processes read it through `{httpts,name=<name>}`. It calls the ingest hooks like RTMP and SRT
 * do (so session limits and policies apply), adds its own `prePublish` rule (the token),
 * reports metrics and adds a GraphQL field. It keeps no stream table: streams live in the
 * service's (`streamTableRef`), so one pushed here is read over SRT too. Settings come from its
 * `plugins` entry.
 */
export default definePlugin({
  name: 'http-ts-ingest',
  sdkVersion: '^4.0.0',
  configSchema: HttpTsConfig,
  validate: (c) => validateConfig(c),
  deps: { placeholders: placeholdersRef, server: serverRef, sessions: optional(sessionsRef), streams: streamTableRef },
  provides: [metricCollectorsRef, graphqlSchemaRef],
  async setup(ctx) {
    const cfg = ctx.config;
    const { streams } = ctx.deps;
    // this plugin's live publishers, to cut them at shutdown (the streams are the service's table)
    const publishers = new Set<StreamPublisher<'mpegts'>>();
    // new on every build of the app: URLs handed out before a reload stop working with it
    const key = randomBytes(12).toString('hex');

    // the plugin's own rule; other plugins' prePublish taps (limits, policies) run as well
    ctx.hooks.tap(ingestHooksRef, 'prePublish', async (peer) =>
      peer.protocol === 'httpts' && cfg.token !== '' && peer.token !== cfg.token
        ? { reason: 'invalid or missing token', kind: 'unauthorized' as const }
        : undefined);
    // and the sessions registry's limits (`sessions.max_sessions`, `max_bitrate_mbit`) for a new reader
    ctx.hooks.tap(ingestHooksRef, 'prePlay', async (peer) => {
      const why = peer.protocol === 'httpts' ? ctx.deps.sessions?.collector('httpts').admission() : undefined;
      return why ? { reason: why, kind: 'overloaded' as const } : undefined;
    });

    const { server } = ctx.deps;
    ctx.deps.placeholders.register({
      name: 'httpts',
      contexts: ['address'],
      // computed on every use: the port is the bound one also when the config says 0
      value: () => `http://${server.host()}:${server.port()}${cfg.path}/{name}?key=${key}`,
    });
    ctx.provide(metricCollectorsRef, httpTsMetrics(streams));
    ctx.provide(graphqlSchemaRef, httpTsGraphql(streams));
    await httpTsRoutes(ctx.http, { cfg, streams, publishers, key, log: ctx.log });
    // publishers are cut before the processes reading them are stopped by the engine's shutdown
    ctx.onShutdown(() => { for (const p of [...publishers]) p.end(); });
  },
});
