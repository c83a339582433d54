import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  definePlugin, optional, eventsRef, filesystemEvents, filesystemsRef, placeholdersRef,
} from '../../sdk/index.ts';
import { DiskFsConfig, validateDiskFs } from './schema.ts';
import { DiskRoot } from './root.ts';
import { DiskFilesystem } from './service.ts';
import { DiskCache } from './cache.ts';

/**
 * The disk filesystem `disk`: `/api/v3/fs/disk` and the public, read-only `/*` (folders serve
 * their `index.html`), with its HTTP cache, capacity bound and `{diskfs}` placeholder.
 */
export default definePlugin({
  name: 'disk-fs',
  configKey: 'storage.disk',
  configSchema: DiskFsConfig,
  validate: validateDiskFs,
  reads: ['storage', 'db'],
  deps: { placeholders: placeholdersRef, events: optional(eventsRef) },
  provides: [filesystemsRef],
  events: [{ type: 'fs.full', subject: ['filesystem', 'path'], description: 'A write was refused with 507 (first refusal after a successful write).', payload: {
    code: 'the error code, e.g. `MEMFS_FULL`, `DISKFS_FILE_TOO_BIG`',
  } }],
  async setup(ctx) {
    const cfg = ctx.config;
    const dir = resolve(cfg.dir);
    await mkdir(dir, { recursive: true });
    const root = await DiskRoot.open(dir, resolve(ctx.sections.db.dir));
    const fs = new DiskFilesystem(root, cfg.max_size_mbytes * 1024 * 1024, filesystemEvents(ctx.deps.events, 'disk'));
    ctx.provide(filesystemsRef, fs);

    ctx.deps.placeholders.register({
      name: 'diskfs', aliases: ['fs:disk'], contexts: ['global', 'address', 'options'], value: () => dir,
    });

    const c = cfg.cache;
    const cacheOptions = c.enable ? {
      maxBytes: c.max_size_mbytes * 1024 * 1024,
      maxFileBytes: c.max_file_size_mbytes * 1024 * 1024,
      ttlMs: c.ttl_seconds * 1000,
      allow: [...c.types.allow],
      block: [...c.types.block],
    } : undefined;
    const cache = cacheOptions && new DiskCache(cacheOptions);
    if (cache) fs.onChange((path) => cache.evict(path));

    fs.cache = cache;
    ctx.log.info({ dir, limit_mbytes: cfg.max_size_mbytes, cache: c.enable }, 'disk filesystem ready');
  },
});
