/*
 * The reference's schema (section 15), in SDL. The base (ping, scalars, enums) is the plugin's
 * own; every other part is written as an extension, the way a contribution from another plugin
 * (api.ts) is, so the composition treats them all alike.
 */

/** Root types, the shared scalars and enums. */
export const BASE_SDL = `
type Query {
  ping: String!
}

type Mutation {
  ping: String!
}

enum Command {
  START
  STOP
  RESTART
  RELOAD
}

enum State {
  RUNNING
  IDLE
}

scalar Time
scalar Any
scalar Map
scalar Uint64
scalar MetricsResponseValue
`;

/** \`about\` and \`log\`: what GET /api and GET /api/v3/log show (no \`auths\` here). */
export const ABOUT_SDL = `
extend type Query {
  about: About
  log: [String!]!
}

type About {
  app: String!
  id: ID!
  name: String!
  created_at: Time!
  uptime_seconds: Uint64!
  version: AboutVersion!
}

type AboutVersion {
  number: String!
  repository_commit: String!
  repository_branch: String!
  build_date: String!
  arch: String!
  compiler: String!
}
`;

/** \`metrics(query)\`: POST /api/v3/metrics with the reference's GraphQL field names. */
export const METRICS_SDL = `
extend type Query {
  metrics(query: MetricsInput!): Metrics!
}

input MetricsInput {
  timerange_seconds: Int
  interval_seconds: Int
  metrics: [MetricInput!]!
}

input MetricInput {
  name: String!
  labels: Map
}

type Metrics {
  timerange_seconds: Int
  interval_seconds: Int
  metrics: [Metric!]!
}

type Metric {
  name: String!
  labels: Map
  values: [MetricsResponseValue!]!
}
`;

/** \`playoutStatus(id, input)\`: the relay status of reference 5.9. */
export const PLAYOUT_SDL = `
extend type Query {
  playoutStatus(id: ID!, input: ID!): RawAVstream
  "Where a playlist: input of a running process is (its current and next item); null when it has none running."
  playlistState(id: ID!, input: ID!): PlaylistState
}

type PlaylistState {
  name: String!
  "index of the current item, -1 between items"
  index: Int!
  current: String
  "seconds into the current item"
  position: Float!
  next: String
  played: Int!
  skipped: Int!
}

type RawAVstreamIO {
  state: State!
  packet: Uint64!
  time: Uint64!
  size_kb: Uint64!
}

type RawAVstreamSwap {
  url: String!
  status: String!
  lasturl: String!
  lasterror: String!
}

type RawAVstream {
  id: String!
  url: String!
  stream: Uint64!
  queue: Uint64!
  aqueue: Uint64!
  dup: Uint64!
  drop: Uint64!
  enc: Uint64!
  looping: Boolean!
  duplicating: Boolean!
  gop: String!
  debug: Any
  input: RawAVstreamIO!
  output: RawAVstreamIO!
  swap: RawAVstreamSwap!
}
`;
