import { ApiError, PUBLIC, type HttpScope, type ProcessesService } from '../../sdk/index.ts';
import { WidgetParams, WidgetProcess } from './schema.ts';
import { widgetOf, type SessionCounts } from './service.ts';

/** `GET /api/v3/widget/process/{id}`: public, not IP-filtered (reference 1.1, 4.14). */
export function widgetRoutes(http: HttpScope, processes: ProcessesService, sessions: SessionCounts | undefined): void {
  http.get('/api/v3/widget/process/:id', {
    config: PUBLIC,
    schema: {
      summary: 'Minimal public figures of a process', tags: ['v16.7.2'], security: [],
      params: WidgetParams, response: { 200: WidgetProcess },
    },
  }, async (req) => {
    const w = widgetOf(processes, req.params.id, sessions);
    if (!w) throw new ApiError(404, 'Unknown process ID', ['unknown process'], 'WIDGET_PROCESS_NOT_FOUND');
    return w;
  });
}
