import { ConfigErrorList, S3StorageConfig, Type, type ConfigErrors, type Static } from '../../sdk/index.ts';

/**
 * `storage.s3` of the configuration (reference 6.2): one filesystem per entry. The entry's schema is
 * the SDK's `S3StorageConfig` (name, mountpoint, auth, endpoint, access_key_id, secret_access_key,
 * bucket, region, use_ssl); this plugin owns the list and its rules.
 */
export const S3FsConfig = Type.Array(S3StorageConfig, {
  default: [],
  description: 'S3 filesystems: each entry is served at `/api/v3/fs/<name>`, its `mountpoint` and `{fs:<name>}`.',
});
export type S3FsConfig = Static<typeof S3FsConfig>;
export type S3FsEntry = S3FsConfig[number];

const NAME = /^[A-Za-z0-9_-]+$/;
const RESERVED = ['disk', 'mem', 'diskfs', 'memfs'];

/**
 * The reference's rules of each entry (keys relative to `storage.s3`, e.g. `1.name`): a name of
 * `[A-Za-z0-9_-]`, not `disk`/`mem`, unique; a mountpoint, absolute and not `/` nor `/memfs` nor
 * another entry's; with auth on, a user name or a password; a bucket.
 */
export function validateS3Fs(list: S3FsConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  const names = new Set<string>();
  const mounts = new Set<string>();
  list.forEach((s, i) => {
    if (!s.name) errs.add(`${i}.name`, 'must be set');
    else if (!NAME.test(s.name)) errs.add(`${i}.name`, `'${s.name}' may only hold letters, digits, _ and -`);
    else if (RESERVED.includes(s.name)) errs.add(`${i}.name`, `'${s.name}' is reserved`);
    else if (names.has(s.name)) errs.add(`${i}.name`, `'${s.name}' is used by another entry`);
    names.add(s.name);
    const m = mountOf(s.mountpoint);
    if (!s.mountpoint.trim()) errs.add(`${i}.mountpoint`, 'must be set');
    else if (m === '/' || m === '/memfs' || m === '/api' || m.startsWith('/api/')) errs.add(`${i}.mountpoint`, `'${s.mountpoint}' is taken by another route`);
    else if (mounts.has(m)) errs.add(`${i}.mountpoint`, `'${s.mountpoint}' is used by another entry`);
    mounts.add(m);
    if (s.auth.enable && !s.auth.username && !s.auth.password) errs.add(`${i}.auth.enable`, 'username or password must be set when auth is enabled');
    if (!s.bucket.trim()) errs.add(`${i}.bucket`, 'must be set');
    if (s.endpoint && /^[a-z]+:\/\//i.test(s.endpoint)) errs.add(`${i}.endpoint`, 'a host[:port] without scheme (use_ssl picks http or https)');
  });
  return errs.map;
}

/** The mountpoint as served: rooted, no trailing slash. */
export function mountOf(mountpoint: string): string {
  const parts = mountpoint.split('/').filter((p) => p && p !== '.' && p !== '..');
  return '/' + parts.join('/');
}
