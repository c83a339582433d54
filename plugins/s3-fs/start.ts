import {
  runUserinfo, type EventsService, type MimeTable, type PlaceholderRegistry, type PluginContext, type ServerInfo,
} from '../../sdk/index.ts';
import { type MetricCollector, type MetricValue } from '../metrics/api.ts';
import { createClient, isTransient } from './client.ts';
import { Bucket } from './objects.ts';
import { BufferBudget } from './pending.ts';
import { mountOf, type S3FsEntry } from './schema.ts';
import { S3Filesystem, type S3Reports } from './service.ts';

type Logger = PluginContext<undefined, {}>['log'];

/** How long a stop waits for buffered writes to reach S3 before reporting them lost. */
export const CLOSE_FLUSH_MS = 5_000;
/** Retries of the bucket check at start: from the first, doubling, up to the last. */
const BUCKET_RETRY = { firstMs: 1_000, maxMs: 30_000 };

export interface StartDeps {
  log: Logger;
  mime: MimeTable;
  events?: EventsService;
  placeholders: PlaceholderRegistry;
  server: ServerInfo;
}

/** What the plugin reports on: lost writes (log, event `fs.lost`, counter) and S3 going down and up. */
function reporter(d: StartDeps, lost: Map<string, number>): S3Reports {
  return {
    lost(fs, path, bytes, reason) {
      lost.set(fs, (lost.get(fs) ?? 0) + 1);
      d.log.error({ filesystem: fs, path, bytes, reason }, 'a write could not be stored in S3');
      d.events?.emit('fs.lost', { filesystem: fs, path }, { bytes, reason });
    },
    health(fs, up, err) {
      if (up) d.log.info({ filesystem: fs }, 'S3 takes writes again; buffered files are being stored');
      else d.log.warn({ filesystem: fs, err: (err as Error)?.message ?? (err as Error)?.name }, 'S3 does not take writes; buffering and retrying');
      d.events?.emit(up ? 'fs.up' : 'fs.down', { filesystem: fs });
    },
  };
}


/** Checks the bucket (creating it) in the background, retried with backoff while S3 does not answer. */
function ensureBucket(fs: string, bucket: Bucket, log: Logger, stopped: () => boolean): void {
  let delay = BUCKET_RETRY.firstMs;
  const attempt = (): void => {
    if (stopped()) return;
    bucket.ensure().then((r) => {
      if (r === 'created') log.info({ filesystem: fs, bucket: bucket.name }, 'bucket created');
    }, (err: unknown) => {
      if (stopped()) return;
      if (!isTransient(err)) return void log.error({ filesystem: fs, bucket: bucket.name, err: (err as Error).name }, 'bucket check refused');
      log.warn({ filesystem: fs, bucket: bucket.name, retry_ms: delay }, 'S3 does not answer the bucket check; retrying');
      setTimeout(attempt, delay).unref();
      delay = Math.min(delay * 2, BUCKET_RETRY.maxMs);
    });
  };
  attempt();
}

/** `s3fs_*` metrics: writes lost, bytes and files waiting in the upload buffer, per filesystem. */
function collector(list: readonly S3Filesystem[], lost: Map<string, number>): MetricCollector {
  return {
    describe: () => [
      { name: 's3fs_lost', description: 'Writes that could not be stored in S3 (since start)', labels: ['name'] },
      { name: 's3fs_buffer_bytes', description: 'Bytes written but not yet in S3', labels: ['name'] },
      { name: 's3fs_buffer_files', description: 'Writes and deletes not yet done in S3', labels: ['name'] },
    ],
    collect() {
      const out: MetricValue[] = [];
      for (const fs of list) {
        const labels = { name: fs.name };
        const p = fs.pending;
        out.push({ name: 's3fs_lost', labels, value: lost.get(fs.name) ?? 0 },
          { name: 's3fs_buffer_bytes', labels, value: p.bytes }, { name: 's3fs_buffer_files', labels, value: p.files });
      }
      return out;
    },
  };
}

/**
 * `{fs:<name>}`: `http://[process:<id>:<token>@]host:port<mountpoint>`, computed on every use (the
 * port is known after listen). A mount with a password gets the child's run credential (its own
 * paths only), never the password itself.
 */
function placeholder(d: StartDeps, s: S3FsEntry, mount: string): void {
  d.placeholders.register({
    name: `fs:${s.name}`,
    contexts: ['address', 'options'],
    value: (_section, run) => {
      const host = d.server.host().includes(':') ? `[${d.server.host()}]` : d.server.host();
      const cred = s.auth.enable && run ? runUserinfo(run) : '';
      return `http://${cred}${host}:${d.server.port()}${mount}`;
    },
  });
}

/** Builds every filesystem of `storage.s3`; nothing here waits for S3. */
export function startS3(entries: readonly S3FsEntry[], d: StartDeps, budget = new BufferBudget()) {
  let stopped = false;
  const lost = new Map<string, number>();
  const reports = reporter(d, lost);
  const buckets: Bucket[] = [];
  const list = entries.map((s) => {
    const mount = mountOf(s.mountpoint);
    const bucket = new Bucket(createClient(s), s.bucket);
    buckets.push(bucket);
    const writes = s.auth.enable ? { basic: { username: s.auth.username, password: s.auth.password } } : {};
    const fs = new S3Filesystem({ name: s.name, mount, bucket, budget, mime: d.mime, writes, reports });
    ensureBucket(s.name, bucket, d.log, () => stopped);
    fs.scan.start();
    placeholder(d, s, mount);
    d.log.info({ filesystem: s.name, mount, bucket: s.bucket, endpoint: s.endpoint || '(AWS)' }, 's3 filesystem ready');
    return fs;
  });
  return {
    filesystems: list,
    collector: collector(list, lost),
    async close(): Promise<void> {
      stopped = true;
      await Promise.all(list.map((fs) => fs.close(CLOSE_FLUSH_MS)));
      for (const b of buckets) b.client.destroy();
    },
  };
}
