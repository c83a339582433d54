import type { EventTypeSpec } from './events.ts';

/*
 * The event types the built-in plugins emit. This list is the source of the catalogue in
 * CONTRIBUTING.md (`node scripts/events-catalogue.ts`); a vendor declares its own with
 * `EventsService.declare`.
 */

const PROC = ['process', 'reference'];
const PEER = ['stream', 'peer', 'protocol'];
const PEER_PAYLOAD = { remote: 'client address `ip:port`' };
const TRAFFIC = { ...PEER_PAYLOAD, rx_bytes: 'bytes received from the client', tx_bytes: 'bytes sent to the client' };

function spec(type: string, emitter: string, subject: readonly string[], description: string, payload: Record<string, string> = {}): EventTypeSpec {
  return Object.freeze({ type, emitter, subject, description, payload });
}

/**
 * Every event type of the built-ins, in catalogue order.
 *
 * @example
 * const stateChange = BUILTIN_EVENT_TYPES.find((t) => t.type === 'process.state');
 */
export const BUILTIN_EVENT_TYPES: readonly EventTypeSpec[] = Object.freeze([
  spec('process.added', 'process', PROC, 'A process was created (saved, before it starts).'),
  spec('process.updated', 'process', PROC, 'A process was replaced by `PUT` (saved; the old run stopped).', {
    previous_id: 'the id before the change',
  }),
  spec('process.deleted', 'process', PROC, 'A process was deleted (its `purge_on_delete` files are gone).'),
  spec('process.state', 'process', PROC, 'A process moved from one exec state to another.', {
    from: 'previous exec state', to: 'new exec state',
    reason: 'why, when the supervisor knows (stale, limit, veto, spawn error, `reconnect`, `schedule`, `duration`)',
    cause: '`reconnect`, `stale`, `limit`, `prepare`, `spawn`, `schedule`, `duration`, `demand` or `idle` when the engine moved it itself',
    last_logline: 'the last log line',
  }),
  spec('process.scheduled', 'process', PROC, 'A scheduled process waits for its next start (`scheduler`).', {
    next_run: 'the next start, RFC 3339 in UTC',
  }),
  spec('process.demand.start', 'process', PROC, 'An on-demand process (`ondemand.enable`) started for a reader that asked for its HLS files or its stream.', {
    reason: '`hls` or `stream`', readers: 'readers at the time',
  }),
  spec('process.demand.stop', 'process', PROC, 'An on-demand process stopped: no reader for its idle time (`ondemand.idle_seconds`); it waits again.', {
    reason: '`idle`', readers: 'readers at the time (0)',
  }),
  spec('process.reconnect', 'process', PROC, 'The supervisor starts a process again after its run ended (`reconnect`).'),
  spec('process.stale', 'process', PROC, 'A process was killed for making no progress (`stale_timeout_seconds`).', { reason: 'the message' }),
  spec('process.limit', 'process', PROC, 'A process was killed for exceeding its cpu or memory limit.', { reason: 'the message' }),
  spec('playlist.item.started', 'playout', ['process', 'playlist'], 'A `playlist:` input started an item (its first keyframe reached the process).', {
    item: 'the item\'s source', index: 'its index in the playlist',
  }),
  spec('playlist.item.skipped', 'playout', ['process', 'playlist'], 'A `playlist:` item could not be read and was skipped (the error frame covers the gap).', {
    item: 'the item\'s source', reason: 'why (ffmpeg\'s last line, a missing file)',
  }),
  spec('ingest.publish.start', 'ingest', PEER, 'A publisher was accepted (RTMP, SRT, vendor ingest).', PEER_PAYLOAD),
  spec('ingest.publish.stop', 'ingest', PEER, 'A publisher is gone (closed, broken, kicked).', TRAFFIC),
  spec('ingest.play.start', 'ingest', PEER, 'A player joined a stream.', PEER_PAYLOAD),
  spec('ingest.play.stop', 'ingest', PEER, 'A player left a stream.', TRAFFIC),
  spec('session.limit', 'sessions', ['collector'], 'A collector started refusing new sessions (first refusal after an admission).', {
    reason: '`Number of sessions exceeded` or `Bitrate limit exceeded`',
  }),
  spec('recording.started', 'recordings', ['recording', 'stream'], 'A recording started reading its stream (published, or the recording was created while it was).', {
    filesystem: 'where its segments go',
  }),
  spec('recording.stopped', 'recordings', ['recording', 'stream'], 'A recording stopped reading: the publisher left (a gap in the index), or it was changed, deleted or shut down.', {
    reason: '`ended`, `dropped`, `stopped`, `changed`, `deleted` or `shutdown`',
  }),
  spec('recording.segment.failed', 'recordings', ['recording', 'stream'], 'A segment was not stored (the filesystem refused it, too many waited, or it outgrew `max_segment_mbytes`).', {
    reason: 'the message', file: 'the segment\'s path, when it had one',
  }),
  spec('fs.full', 'memfs, disk-fs', ['filesystem', 'path'], 'A write was refused with 507 (first refusal after a successful write).', {
    code: 'the error code, e.g. `MEMFS_FULL`, `DISKFS_FILE_TOO_BIG`',
  }),
  spec('fs.purge', 'memfs', ['filesystem', 'path'], 'The oldest files were dropped to make room (`storage.memory.purge`).', {
    files: 'files dropped', bytes: 'bytes freed',
  }),
  spec('fs.lost', 's3-fs', ['filesystem', 'path'], 'A write to an S3 filesystem could not be stored (refused by S3, buffer full, or the service stopped first).', {
    bytes: 'size of the lost file', reason: 'why',
  }),
  spec('fs.down', 's3-fs', ['filesystem'], 'An S3 filesystem failed a call: writes are buffered and retried.'),
  spec('fs.up', 's3-fs', ['filesystem'], 'An S3 filesystem takes calls again after a failure.'),
  spec('config.changed', 'core', [], 'A new configuration was stored (`PUT /api/v3/config`); it applies at the next reload.'),
  spec('config.reloaded', 'events', [], 'The service was rebuilt from the stored configuration.'),
  spec('cluster.leader', 'cluster', ['node'], 'This node took or lost the cluster leader lease.', { change: '`took` or `lost`' }),
  spec('cluster.node.joined', 'cluster', ['node'], 'A node appeared in this node\'s view of the live nodes (`core_nodes`).', {
    api_address: 'the URL the node is reached at',
  }),
  spec('cluster.node.left', 'cluster', ['node'], 'A node dropped out of this node\'s view (left, or its announcements expired).'),
  spec('cluster.process.owned', 'cluster', ['process', 'node'], 'This node took the ownership lease of a process assigned to it.'),
  spec('cluster.process.released', 'cluster', ['process', 'node'], 'This node gave up a process (moved) or lost its lease (fenced).', {
    why: '`moved`, or why the lease was lost',
  }),
  spec('service.started', 'events', [], 'The service is listening (once per run of the program).', { port: 'HTTP port' }),
  spec('service.stopping', 'events', [], 'The service is stopping (for good or for a reload).'),
  spec('events.lost', 'events', [], 'Synthetic, first on a resumed stream: the events after the given id are no longer held.', {
    last_event_id: 'the id the client resumed from', oldest_id: 'the oldest id still held (`<boot>-<id>`)',
  }),
  spec('events.overflow', 'events', [], 'Synthetic, last on a stream: the client read too slowly and is dropped.', {
    queued_bytes: 'bytes waiting for the client', limit_bytes: 'the bound',
  }),
]);
