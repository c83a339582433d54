import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { FastifyRequest } from 'fastify';
import type { ChildSpawnOptions, EventsService, HttpScope, PluginState, RunUse } from '../../../sdk/index.ts';
import type { Ffmpeg } from '../relay/ffmpeg.ts';
import { PlaylistFeed } from './feed.ts';
import { playlistRoutes } from './routes.ts';
import type { SourceRules } from './sources.ts';
import { PlaylistStore, type PlaylistDoc } from './store.ts';

export interface PlaylistsOptions {
  state: PluginState;
  /** `storage.disk.dir` as configured. */
  diskDir: string;
  /** Why an address is refused as a source: the process inputs' rule (`processesRef.inputProblem`). */
  inputProblem(address: string): string | undefined;
  ffmpeg: Ffmpeg;
  events?: EventsService;
  /** Whether process `id`'s maker may do `use` now (`ProcessesService.makerMay`): every item start asks it. */
  makerMay?(id: string, use: RunUse): boolean;
}

export interface Playlists {
  store: PlaylistStore;
  /** The item sequence of a `playlist:<name>` input of a process. */
  feed(name: string, processId: string, log: Logger): PlaylistFeed;
  /**
   * `may`: whether the caller of a request may read a disk item (`httpHooksRef.processUse`: a process plays it);
   * `disk`: what of the disk folder the probes at insert reach for the caller (`ProcessesService.makerDisk`).
   */
  routes(http: HttpScope, may?: (req: FastifyRequest, use: RunUse) => boolean, disk?: (req: FastifyRequest) => ChildSpawnOptions['disk']): void;
}

/** The playlist store (state document `playlists`), its routes and the feeds of `playlist:` inputs. */
export async function openPlaylists(o: PlaylistsOptions): Promise<Playlists> {
  const doc = await o.state.open<PlaylistDoc>('playlists', {
    init: () => ({ playlists: {} }),
    parse: (raw) => {
      const d = raw as Partial<PlaylistDoc> | null;
      return { playlists: d && typeof d.playlists === 'object' && d.playlists ? d.playlists : {} };
    },
  });
  const rules: SourceRules = { diskDir: resolve(o.diskDir), inputProblem: (a) => o.inputProblem(a) };
  const store = new PlaylistStore(doc, rules, o.ffmpeg);
  return {
    store,
    feed: (name, processId, log) => new PlaylistFeed({
      name, processId, rules, log, playlist: (n) => store.get(n),
      may: o.makerMay && ((path) => o.makerMay!(processId, { type: 'fs', resource: path, action: 'GET' })),
      emit: o.events ? (type, subject, payload) => o.events!.emit(type, subject, payload) : undefined,
    }),
    routes: (http, may, disk) => playlistRoutes(http, store, may, disk),
  };
}
