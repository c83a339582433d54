import { diskItemPath } from './uses.ts';
import type { FastifyRequest } from 'fastify';
import { ApiError, Type, type ChildSpawnOptions, type HttpScope, type RunUse } from '../../../sdk/index.ts';
import { Playlist, PlaylistBody, PlaylistList, PlaylistParams } from './schema.ts';
import type { PlaylistStore } from './store.ts';

const TAGS = ['playlist'];
const notFound = (name: string) => new ApiError(404, 'Unknown playlist', [`no playlist named '${name}'`], 'PLAYLIST_NOT_FOUND');

/**
 * `/api/v3/playlist` (list) and `/api/v3/playlist/{name}` (GET, PUT create/replace, DELETE). `may`:
 * whether the caller may read a disk item; `disk`: what of the disk folder the item probes reach for it.
 */
export function playlistRoutes(
  http: HttpScope, store: PlaylistStore, may: (req: FastifyRequest, use: RunUse) => boolean = () => true,
  disk: (req: FastifyRequest) => ChildSpawnOptions['disk'] = () => undefined,
): void {
  void http.register(async (s: HttpScope) => {
    s.get('/api/v3/playlist', {
      schema: { summary: 'List the stored playlists', tags: TAGS, response: { 200: PlaylistList } },
    }, async () => store.list());

    s.get('/api/v3/playlist/:name', {
      schema: { summary: 'Get one playlist', tags: TAGS, params: PlaylistParams, response: { 200: Playlist } },
    }, async (req) => store.get(req.params.name) ?? Promise.reject(notFound(req.params.name)));

    s.put('/api/v3/playlist/:name', {
      schema: {
        summary: 'Create or replace a playlist (disk items are probed; takes effect at the next item of processes playing it)',
        tags: TAGS, params: PlaylistParams, body: PlaylistBody, response: { 200: Playlist },
      },
    }, async (req) => {
      // a disk item is read by the processes that play it (and probed now): its maker must be allowed to read it (an access plugin's policies)
      for (const [i, item] of (req.body.items ?? []).entries()) {
        const resource = diskItemPath(item.source);
        if (resource === undefined) continue;
        if (!may(req, { type: 'fs', resource, action: 'GET' })) throw new ApiError(403, 'Forbidden', [`items[${i}]: no policy of its maker allows GET fs ${resource.slice(0, 200)}`], 'PLAYLIST_FORBIDDEN');
      }
      return store.put(req.params.name, req.body, (path) => may(req, { type: 'fs', resource: path, action: 'GET' }), disk(req));
    });

    s.delete('/api/v3/playlist/:name', {
      schema: { summary: 'Delete a playlist (processes playing it send their error frame at the next item)', tags: TAGS, params: PlaylistParams, response: { 200: Type.String() } },
    }, async (req, reply) => {
      if (!(await store.delete(req.params.name))) throw notFound(req.params.name);
      return reply.type('text/plain; charset=utf-8').send('OK');
    });
  });
}
