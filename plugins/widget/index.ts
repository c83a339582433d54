import { definePlugin, processesRef } from '../../sdk/index.ts';
import { widgetRoutes } from './routes.ts';

/**
 * The public process widget: `GET /api/v3/widget/process/{id}` with the session counts and the
 * uptime of one process, for embedding players without credentials.
 */
export default definePlugin({
  name: 'widget',
  deps: { processes: processesRef },
  setup(ctx) {
    widgetRoutes(ctx.http, ctx.deps.processes);
  },
});
