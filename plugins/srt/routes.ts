import { Type, type HttpScope } from '../../sdk/index.ts';
import type { SrtHost } from './host/host.ts';

const LogMap = Type.Record(Type.String(), Type.Array(Type.Object({ ts: Type.Integer(), msg: Type.Array(Type.String()) })));

/** SRTChannels (reference 5.13): publishers, subscribers and per-socket statistics. */
export const SrtChannels = Type.Object({
  publisher: Type.Record(Type.String(), Type.Integer()),
  subscriber: Type.Record(Type.String(), Type.Array(Type.Integer())),
  connections: Type.Record(Type.String(), Type.Object({ log: LogMap, stats: Type.Record(Type.String(), Type.Number()) })),
  log: LogMap,
});

/** `GET /api/v3/srt` (only while SRT is enabled; marked experimental by the reference). */
export function srtRoutes(http: HttpScope, host: SrtHost): void {
  http.get('/api/v3/srt', {
    schema: {
      summary: 'List of the SRT streams now publishing, with their subscribers and statistics (experimental)',
      tags: ['v16.9.0'], response: { 200: SrtChannels },
    },
  }, async () => host.list());
}
