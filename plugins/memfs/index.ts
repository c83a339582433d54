import {
  definePlugin, optional, eventsRef, filesystemEvents, filesystemsRef, placeholdersRef, runUserinfo, serverRef, MimeTable,
} from '../../sdk/index.ts';
import { MemfsConfig, validateMemfs } from './schema.ts';
import { MemFilesystem, type MemStore } from './service.ts';

/**
 * The memory filesystem `mem`: `/api/v3/fs/mem`, the public `/memfs/*` (ffmpeg PUTs HLS there
 * through `{memfs}`), capacity with optional purge. Its files survive config reloads.
 */
export default definePlugin({
  name: 'memfs',
  configKey: 'storage.memory',
  configSchema: MemfsConfig,
  validate: validateMemfs,
  reads: ['storage'],
  deps: {
    placeholders: placeholdersRef, server: serverRef, events: optional(eventsRef),
  },
  provides: [filesystemsRef],
  events: [
    { type: 'fs.full', subject: ['filesystem', 'path'], description: 'A write was refused with 507 (first refusal after a successful write).', payload: {
      code: 'the error code, e.g. `MEMFS_FULL`',
    } },
    { type: 'fs.purge', subject: ['filesystem', 'path'], description: 'The oldest files were dropped to make room (`storage.memory.purge`).', payload: {
      files: 'files dropped', bytes: 'bytes freed',
    } },
  ],
  setup(ctx) {
    const cfg = ctx.config;
    const mime = MimeTable.load(ctx.sections.storage.mimetypes_file);
    const store = ctx.retain<MemStore>('files', () => ({ files: new Map(), seq: 0 }));
    const a = cfg.auth;
    const fs = new MemFilesystem(store, {
      limit: cfg.max_size_mbytes * 1024 * 1024, purge: cfg.purge, mime, events: filesystemEvents(ctx.deps.events, 'mem'),
      // the core's file door serves `/memfs`; writes behind Basic auth when it is on
      writes: a.enable ? { basic: { username: a.username, password: a.password } } : {},
    });
    const freed = fs.resize();
    if (freed > 0) ctx.log.info({ freed }, 'purged the oldest files to fit the new size limit');
    const { used, limit } = fs.usage();
    if (limit > 0 && used > limit) ctx.log.warn({ used, limit }, 'memfs holds more than its limit; writes get 507 until files are deleted');
    ctx.provide(filesystemsRef, fs);

    const { server } = ctx.deps;
    ctx.deps.placeholders.register({
      name: 'memfs',
      aliases: ['fs:mem'],
      contexts: ['address', 'options'],
      // computed on every use: the port is known only once the app listens. A child writes with
      // its run's credential (its own paths only), never with storage.memory.auth's password.
      value: (_section, run) => {
        const host = server.host().includes(':') ? `[${server.host()}]` : server.host();
        const cred = cfg.auth.enable && run ? runUserinfo(run) : '';
        return `http://${cred}${host}:${server.port()}/memfs`;
      },
    });
  },
});
