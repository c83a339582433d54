import type { HttpScope } from '../../sdk/index.ts';
import type { ClusterNode } from './node.ts';
import { ClusterView } from './schema.ts';

/** `GET /api/v3/cluster`: this node, the leader, the live nodes and the NATS health (protected like /api/v3). */
export function clusterRoutes(http: HttpScope, node: ClusterNode): void {
  http.get('/api/v3/cluster', {
    schema: {
      summary: 'The cluster as this node sees it: nodes, leader, assignments, health', tags: ['cluster'],
      response: { 200: ClusterView },
    },
  }, async () => node.view());
}
