import { Type, type HttpScope } from '../../sdk/index.ts';
import { RtmpChannel } from './schema.ts';
import type { RtmpService } from './ref.ts';

/** `GET /api/v3/rtmp`: the streams being published, reference shape `[{name}]` (4.8). */
export function rtmpRoutes(http: HttpScope, service: RtmpService): void {
  http.get('/api/v3/rtmp', {
    schema: {
      summary: 'List all publishing RTMP streams', tags: ['v16.7.2'],
      response: { 200: Type.Array(RtmpChannel) },
    },
  }, async () => service.channels().map((c) => ({ name: c.name })));
}
