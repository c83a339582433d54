import { definePlugin, optional, eventsRef, filesystemsRef, placeholdersRef, serverRef, MimeTable } from '../../sdk/index.ts';
import { metricCollectorsRef } from '../metrics/api.ts';
import { S3FsConfig, validateS3Fs } from './schema.ts';

/**
 * The S3 filesystems of `storage.s3`: each entry is a filesystem of type `s3` (its name in
 * `/api/v3/fs/<name>`, its public mount, `{fs:<name>}`), backed by a bucket of any S3-compatible
 * store. The AWS SDK is loaded only when an entry exists (a slim install may lack it).
 */
export default definePlugin({
  name: 's3-fs',
  configKey: 'storage.s3',
  configSchema: S3FsConfig,
  validate: validateS3Fs,
  reads: ['storage'],
  deps: { placeholders: placeholdersRef, server: serverRef, events: optional(eventsRef) },
  provides: [filesystemsRef, metricCollectorsRef],
  events: [
    { type: 'fs.lost', subject: ['filesystem', 'path'], description: 'A write to an S3 filesystem could not be stored (refused by S3, buffer full, or the service stopped first).', payload: {
      bytes: 'size of the lost file', reason: 'why',
    } },
    { type: 'fs.down', subject: ['filesystem'], description: 'An S3 filesystem failed a call: writes are buffered and retried.', payload: {} },
    { type: 'fs.up', subject: ['filesystem'], description: 'An S3 filesystem takes calls again after a failure.', payload: {} },
  ],
  async setup(ctx) {
    if (ctx.config.length === 0) return;
    let start: typeof import('./start.ts').startS3;
    try {
      ({ startS3: start } = await import('./start.ts'));
    } catch (err) {
      ctx.log.error({ err: (err as Error).message }, 'storage.s3 is set but the AWS SDK is not installed (npm ci without SLIM): no S3 filesystem');
      return;
    }
    const mime = MimeTable.load(ctx.sections.storage.mimetypes_file);
    const s3 = start(ctx.config, { log: ctx.log, mime, events: ctx.deps.events, placeholders: ctx.deps.placeholders, server: ctx.deps.server });
    for (const fs of s3.filesystems) ctx.provide(filesystemsRef, fs);
    ctx.provide(metricCollectorsRef, s3.collector);
    ctx.onClose(() => s3.close());
  },
});
