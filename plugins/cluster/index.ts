import { aboutRef, definePlugin, eventsRef, filesystemsRef, optional, processesRef, processReplicaRef, serverRef, streamTableRef } from '../../sdk/index.ts';
import { iamReplicaRef } from '../iam/api.ts';
import { ClusterConfig, validateCluster } from './schema.ts';
import { CLUSTER_EVENTS } from './events.ts';

/**
 * Cluster (issue 20): several nodes as one service on NATS JetStream. Each node announces
 * itself (`core_nodes`) and competes for the leader lease (`core_leader`); the leader places the
 * shared processes (`core_processes`, written by every node's engine through `replica.ts`) and
 * each node runs those whose ownership lease it holds; requests and files for another node's
 * processes are proxied there (`proxy*.ts`), players of another node's streams read them through a pull relay
 * (`relay*.ts`); `GET /api/v3/cluster` shows it all. Opt-in: `"*"` never loads it, only
 * `{"name": "cluster", "config": {...}}` in `plugins` does. The NATS client is imported when the
 * plugin is mounted, so a build without it still reads this definition.
 */
export default definePlugin({
  name: 'cluster',
  configSchema: ClusterConfig,
  validate: validateCluster,
  reads: ['id'],
  deps: {
    about: aboutRef, processes: processesRef, replica: processReplicaRef, server: serverRef, events: optional(eventsRef), filesystems: filesystemsRef,
    streams: streamTableRef, iam: optional(iamReplicaRef),
  },
  events: CLUSTER_EVENTS,
  async setup(ctx) {
    const { ClusterNode } = await import('./node.ts');
    const { clusterRoutes } = await import('./routes.ts');
    const { Replica } = await import('./replica.ts');
    const { about, processes, server, events } = ctx.deps;
    const nodeId = ctx.config.node_id ?? nodeIdFrom(ctx.sections.id);
    // the engine writes through the shared store and runs only what this node owns (replica.ts)
    const replica = new Replica(ctx.deps.replica, { node: nodeId, log: ctx.log, runs: (id) => node.runs(id) });
    // IAM's users, when the iam plugin is on: written through core_users, applied from it (users.ts)
    const users = ctx.deps.iam ? new (await import('./users.ts')).UsersShare(ctx.deps.iam, { node: nodeId, log: ctx.log }) : undefined;
    const node: InstanceType<typeof ClusterNode> = new ClusterNode(ctx.config, {
      log: ctx.log,
      nodeId,
      version: about.about().version.number,
      running: () => processes.list().filter((p) => p.exec === 'running').length,
      sync: replica,
      users,
      // the lease is taken before start and kept until stop returned (the ffmpeg is gone)
      hooks: {
        start: async (id) => {
          ctx.log.info({ process: id }, 'cluster: this node owns the process');
          events?.emit('cluster.process.owned', { process: id, node: nodeId });
          await replica.rerun(id).catch((err) => ctx.log.warn({ err, process: id }, 'cluster: starting an owned process'));
        },
        stop: async (id, why) => {
          ctx.log.info({ process: id, why }, 'cluster: this node no longer owns the process');
          await replica.rerun(id).catch((err) => ctx.log.warn({ err, process: id }, 'cluster: stopping a process'));
          events?.emit('cluster.process.released', { process: id, node: nodeId }, { why });
        },
      },
      emit: events ? (type, subject, payload) => events.emit(type, subject, payload) : undefined,
      // the stream names this node serves to the other nodes' relays (relay.ts)
      streams: () => relay.served(),
      onNodes: () => relay.refresh(),
    });
    clusterRoutes(ctx.http, node);
    // one API on every node: requests for another node's process or file go there (proxy.ts)
    const { mountProxy } = await import('./proxy-mount.ts');
    const proxy = mountProxy({ hooks: ctx.hooks, node, bucket: () => node.buckets?.assign, filesystems: () => ctx.deps.filesystems,
      periodMs: ctx.config.announce_sec * 1000, log: ctx.log });
    // players here of streams other nodes have: pulled from there (relay.ts)
    const { mountRelay } = await import('./relay-mount.ts');
    const relay = mountRelay({ http: ctx.http, streams: ctx.deps.streams, node, key: proxy.key, max: ctx.config.max_relays,
      periodMs: ctx.config.announce_sec * 1000, log: ctx.log });
    ctx.onListen((port) => { node.start(ctx.config.api_address ?? `http://${server.host()}:${port}`); proxy.start(); relay.open(); });
    ctx.onClose(async () => { relay.close(); proxy.close(); await node.close(); });
  },
});

/** The configuration's id as a KV key (NATS refuses dots, spaces, wildcards in a node key). */
function nodeIdFrom(id: string): string {
  return id.replace(/[^A-Za-z0-9_=-]/g, '_') || 'node';
}
