import { definePlugin, optional, processesRef } from '../../sdk/index.ts';
import { sessionsRef } from '../sessions/api.ts';

/**
 * The public process widget: `GET /api/v3/widget/process/{id}` with the session counts (from the
 * `sessions` plugin's `hls` collector; zeros without it) and the uptime of one process, for
 * embedding players without credentials.
 */
export default definePlugin({
  name: 'widget',
  deps: { processes: processesRef, sessions: optional(sessionsRef) },
  async setup(ctx) {
    const { widgetRoutes } = await import('./routes.ts');
    const sessions = ctx.deps.sessions;
    widgetRoutes(ctx.http, ctx.deps.processes, sessions && { counts: (reference) => sessions.count('hls', reference) });
  },
});
