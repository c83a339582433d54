import { Formatted, MAX_TIMER_SECONDS, Type, type ConfigErrors, type Static } from '../../sdk/index.ts';

/** NATS rejects these characters in KV keys; node ids become keys of `core_nodes`. */
const NODE_ID = '^[A-Za-z0-9_=-]+$';

/** The cluster plugin's settings: its `plugins` entry's `config` (`{"name": "cluster", "config": {...}}`). */
export const ClusterConfig = Type.Object({
  servers: Type.Array(Formatted('nats-url'), {
    minItems: 1, default: ['nats://127.0.0.1:4222'],
    description: 'NATS servers this node connects to (only these: servers the cluster gossips are ignored).',
  }),
  node_id: Type.Optional(Type.String({ pattern: NODE_ID, maxLength: 128, description: 'This node\'s id in the cluster (default: the configuration\'s `id`).' })),
  api_address: Type.Optional(Formatted('http-url', undefined, { description: 'URL other nodes reach this node\'s API at (default: http://<host>:<bound port>).' })),
  announce_sec: Type.Number({ minimum: 0.2, maximum: MAX_TIMER_SECONDS, default: 2, description: 'Seconds between two liveness announcements and lease renewals.' }),
  ttl_sec: Type.Number({ minimum: 1, maximum: MAX_TIMER_SECONDS, default: 6, description: 'Seconds after which a silent node is gone and an unrenewed leader lease expires.' }),
  replicas: Type.Integer({ minimum: 1, maximum: 5, default: 1, description: 'JetStream replicas of the cluster buckets (3 for a three-server NATS cluster).' }),
  max_processes: Type.Integer({ minimum: 0, default: 0, description: 'Processes this node takes at most, announced as its capacity (0 = no limit).' }),
  on_quorum_loss: Type.Union([Type.Literal('stop'), Type.Literal('keep')], {
    default: 'stop',
    description: 'When NATS is unreachable (quorum lost, or this node cut off): `stop` ends each ffmpeg at its lease deadline (never two copies, an outage meanwhile); `keep` lets them run and stops on reconnect the copies another node took (no outage, two copies possible meanwhile).',
  }),
  max_relays: Type.Integer({
    minimum: 0, default: 16,
    description: 'Streams this node pulls from other nodes at once for its RTMP, SRT and WebRTC players (0 = none: players of another node\'s streams are refused).',
  }),
}, { default: {} });
export type ClusterConfig = Static<typeof ClusterConfig>;

/** Cross-field rules: a lease must survive a late renewal. */
export function validateCluster(c: ClusterConfig): ConfigErrors {
  const errs: ConfigErrors = {};
  // renewals happen every announce_sec and a leader acts only until renewed_at + ttl/2
  if (c.ttl_sec < 2 * c.announce_sec) errs.ttl_sec = ['must be at least twice announce_sec'];
  return errs;
}

/** What a node announces in `core_nodes` every announce_sec. */
export const NodeInfo = Type.Object({
  id: Type.String(),
  api_address: Type.String(),
  capacity: Type.Object({ cpus: Type.Integer(), max_processes: Type.Integer() }),
  load: Type.Object({ loadavg: Type.Number(), processes_running: Type.Integer() }),
  version: Type.String(),
  started_at: Type.String({ description: 'ISO 8601' }),
  streams: Type.Optional(Type.Array(Type.String(), {
    description: 'Stream names this node serves to the other nodes\' players: its live streams and those its on-demand processes publish (not the ones it pulls itself)',
  })),
});
export type NodeInfo = Static<typeof NodeInfo>;

/** `GET /api/v3/cluster`. */
export const ClusterView = Type.Object({
  node_id: Type.String(),
  leader: Type.Union([Type.String(), Type.Null()], { description: 'The leader\'s node id, null when unknown' }),
  nodes: Type.Array(NodeInfo),
  assignments: Type.Array(Type.Object({ process_id: Type.String(), node_id: Type.String() })),
  health: Type.Object({
    nats: Type.Union([Type.Literal('connected'), Type.Literal('disconnected')]),
    last_error: Type.Union([Type.String(), Type.Null()]),
  }),
});
export type ClusterView = Static<typeof ClusterView>;
