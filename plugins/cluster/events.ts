import type { EventTypeDeclaration } from '../../sdk/index.ts';

/** The events the cluster emits (its definition's `events`; emitted through `optional(eventsRef)`). */
export const CLUSTER_EVENTS: readonly EventTypeDeclaration[] = [
  { type: 'cluster.leader', subject: ['node'], description: 'This node took or lost the cluster leader lease.', payload: { change: '`took` or `lost`' } },
  { type: 'cluster.node.joined', subject: ['node'], description: 'A node appeared in this node\'s view of the live nodes (`core_nodes`).', payload: {
    api_address: 'the URL the node is reached at',
  } },
  { type: 'cluster.node.left', subject: ['node'], description: 'A node dropped out of this node\'s view (left, or its announcements expired).', payload: {} },
  { type: 'cluster.process.owned', subject: ['process', 'node'], description: 'This node took the ownership lease of a process assigned to it.', payload: {} },
  { type: 'cluster.process.released', subject: ['process', 'node'], description: 'This node gave up a process (moved) or lost its lease (fenced).', payload: {
    why: '`moved`, or why the lease was lost',
  } },
];
