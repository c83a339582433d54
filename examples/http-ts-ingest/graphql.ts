import type { StreamTable } from '@media-core/sdk';
import type { GraphqlContribution } from '@media-core/plugins/graphql/api';
import { streamViews } from './views.ts';

/**
 * The plugin's part of the GraphQL schema: the live streams, the same view as
 * `GET /api/v3/httpts`. Provided whether or not the graphql plugin is loaded; without it nobody
 * reads the contribution.
 */
export function httpTsGraphql(streams: StreamTable): GraphqlContribution {
  return {
    name: 'http-ts-ingest',
    typeDefs: `
      "A stream pushed over HTTP into the plugin http-ts-ingest."
      type HttpTsStream {
        name: String!
        "The publisher, ip:port."
        remote: String!
        "Unix seconds."
        since: Int!
        bytes_rx: Uint64!
        readers: Int!
      }
      extend type Query {
        "Streams being published over HTTP now."
        httptsStreams: [HttpTsStream!]!
      }`,
    resolvers: { Query: { httptsStreams: () => streamViews(streams) } },
  };
}
