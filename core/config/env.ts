import type { TSchema } from '@sinclair/typebox';
import { currentBuild } from './build.ts';
import { configLeaves, setPath } from './schema-walk.ts';

/* CORE_* environment variables (reference 6.2): derived from the key path unless listed here. */

interface EnvSpec { names: string[]; sep: string }

/** Names that do not follow CORE_<PATH> or that have deprecated alternatives. */
const EXTRA: Record<string, { primary?: string; alt?: string[]; sep?: string }> = {
  'log.max_lines': { alt: ['CORE_LOG_MAXLINES'] },
  'api.auth.username': { alt: ['RS_USERNAME'] },
  'api.auth.password': { alt: ['RS_PASSWORD'] },
  'tls.cert_file': { alt: ['CORE_TLS_CERTFILE'] },
  'tls.key_file': { alt: ['CORE_TLS_KEYFILE'] },
  'storage.mimetypes_file': { alt: ['CORE_MIMETYPES_FILE'] },
  'storage.disk.max_size_mbytes': { alt: ['CORE_STORAGE_DISK_MAXSIZEMBYTES'] },
  'storage.disk.cache.max_size_mbytes': { alt: ['CORE_STORAGE_DISK_CACHE_MAXSIZEMBYTES'] },
  'storage.disk.cache.ttl_seconds': { alt: ['CORE_STORAGE_DISK_CACHE_TTLSECONDS'] },
  'storage.disk.cache.max_file_size_mbytes': { alt: ['CORE_STORAGE_DISK_CACHE_MAXFILESIZEMBYTES'] },
  'storage.disk.cache.types.allow': { alt: ['CORE_STORAGE_DISK_CACHE_TYPES'], sep: ' ' },
  'storage.disk.cache.types.block': { sep: ' ' },
  'storage.memory.max_size_mbytes': { alt: ['CORE_STORAGE_MEMORY_MAXSIZEMBYTES'] },
  'storage.s3': { sep: '|' },
  'encoder.max_processes': { alt: ['CORE_FFMPEG_MAXPROCESSES', 'CORE_ENCODER_MAXPROCESSES'] },
  'encoder.access.input.allow': { sep: ' ' },
  'encoder.access.input.block': { sep: ' ' },
  'encoder.access.output.allow': { sep: ' ' },
  'encoder.access.output.block': { sep: ' ' },
  'encoder.log.max_lines': { alt: ['CORE_FFMPEG_LOG_MAXLINES'] },
  'encoder.log.max_history': { alt: ['CORE_FFMPEG_LOG_MAXHISTORY'] },
  'playout.min_port': { alt: ['CORE_PLAYOUT_MINPORT'] },
  'playout.max_port': { alt: ['CORE_PLAYOUT_MAXPORT'] },
  'debug.force_gc': { alt: ['CORE_DEBUG_FORCEGC'] },
  'metrics.range_sec': { primary: 'CORE_METRICS_RANGE_SECONDS', alt: ['CORE_METRICS_RANGE_SEC'] },
  'metrics.interval_sec': { primary: 'CORE_METRICS_INTERVAL_SECONDS', alt: ['CORE_METRICS_INTERVAL_SEC'] },
  'sessions.max_bitrate_mbit': { primary: 'CORE_SESSIONS_MAXBITRATE_MBIT', alt: ['CORE_SESSIONS_MAX_BITRATE_MBIT'] },
  'sessions.max_sessions': { alt: ['CORE_SESSIONS_MAXSESSIONS'] },
  'router.routes': { sep: ' ' },
  'events.webhooks': { sep: '|' },
};

/** Sections written twice: the interface's name first, the original's after it. */
export const ALIASES: ReadonlyArray<readonly [string, string]> = [
  ['encoder', 'ffmpeg'],
  ['api.auth.idp', 'api.auth.auth0'],
];

const SKIP = new Set(['version', 'created_at', 'plugins']);

function deriveName(path: string): string {
  return 'CORE_' + path.toUpperCase().replace(/\./g, '_');
}

type EnvRow = { path: string; schema: TSchema; spec: EnvSpec };
/** The table of the build's schema it was made from (one per installed build). */
let made: { of: TSchema; table: EnvRow[] } | undefined;

/** Every configurable leaf of the installed build's configuration with its environment names (primary first). */
export function envTable(): EnvRow[] {
  const schema = currentBuild().configSchema;
  if (made?.of === schema) return made.table;
  const table: EnvRow[] = [];
  made = { of: schema, table };
  for (const leaf of configLeaves(schema)) {
    if (SKIP.has(leaf.path)) continue;
    if (ALIASES.some(([, alias]) => leaf.path === alias || leaf.path.startsWith(alias + '.'))) continue;
    const extra = EXTRA[leaf.path] ?? {};
    const names = [extra.primary ?? deriveName(leaf.path)];
    for (const [main, alias] of ALIASES) {
      if (leaf.path.startsWith(main + '.')) names.push(deriveName(alias + leaf.path.slice(main.length)));
    }
    names.push(...(extra.alt ?? []));
    table.push({ path: leaf.path, schema: leaf.schema, spec: { names, sep: extra.sep ?? ',' } });
  }
  return table;
}

function splitList(raw: string, sep: string): string[] {
  return raw.split(sep).map((s) => s.trim()).filter((s) => s !== '');
}

/** Parses a tenant given as base64 JSON or as `auth0://clientid@domain?aud=..&user=..`. */
function parseTenant(raw: string): unknown {
  if (/^[a-z0-9]+:\/\//i.test(raw)) {
    const u = new URL(raw);
    return {
      domain: u.host, clientid: decodeURIComponent(u.username),
      audience: u.searchParams.get('aud') ?? '', users: u.searchParams.getAll('user'),
    };
  }
  return JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
}

/**
 * Parses one S3 storage of `CORE_STORAGE_S3` (reference 6.2):
 * `https://KEYID:SECRET@region.endpoint/bucket?name=NAME&mount=/MOUNT[&username=U&password=P]`;
 * `https` sets use_ssl, the first host label is the region, the rest the endpoint (with its port),
 * `username`/`password` present turn the storage's auth on.
 */
export function parseS3Url(raw: string): unknown {
  const u = new URL(raw);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`'${u.protocol}' is not http: or https:`);
  const dot = u.hostname.indexOf('.');
  const q = u.searchParams;
  const auth = q.has('username') || q.has('password');
  return {
    name: q.get('name') ?? '',
    mountpoint: q.get('mount') ?? '',
    auth: { enable: auth, username: q.get('username') ?? '', password: q.get('password') ?? '' },
    endpoint: (dot < 0 ? u.hostname : u.hostname.slice(dot + 1)) + (u.port ? `:${u.port}` : ''),
    access_key_id: decodeURIComponent(u.username),
    secret_access_key: decodeURIComponent(u.password),
    bucket: decodeURIComponent(u.pathname.replace(/^\/+|\/+$/g, '')),
    region: dot < 0 ? '' : u.hostname.slice(0, dot),
    use_ssl: u.protocol === 'https:',
  };
}

function parseValue(raw: string, schema: TSchema, sep: string, path: string): unknown {
  const type = schema.type as string | undefined;
  if (type === 'boolean') {
    const v = raw.trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(v)) return true;
    if (['false', '0', 'no', 'off', ''].includes(v)) return false;
    throw new Error(`'${raw}' is not a boolean`);
  }
  if (type === 'integer') {
    if (!/^\s*-?\d+\s*$/.test(raw)) throw new Error(`'${raw}' is not an integer`);
    return Number(raw);
  }
  if (type === 'number') {
    const n = raw.trim() === '' ? Number.NaN : Number(raw);
    if (!Number.isFinite(n)) throw new Error(`'${raw}' is not a number`);
    return n;
  }
  if (type === 'array') {
    const items = splitList(raw, sep);
    const itemType = (schema as { items?: TSchema }).items?.type;
    if (itemType === 'object') return items.map(path.endsWith('tenants') ? parseTenant : path === 'storage.s3' ? parseS3Url : (s) => JSON.parse(s));
    return items;
  }
  if (type === 'object') {
    const out: Record<string, string> = {};
    for (const pair of splitList(raw, sep)) {
      const i = pair.indexOf(':');
      if (i <= 0) throw new Error(`'${pair}' is not a from:to pair`);
      out[pair.slice(0, i)] = pair.slice(i + 1);
    }
    return out;
  }
  return raw;
}

export interface EnvResult {
  /** Paths whose value came from the environment. */
  overrides: string[];
  /** Path -> messages for values that could not be parsed. */
  errors: Record<string, string[]>;
  /** Deprecated names that were used. */
  warnings: string[];
}

/** Merges CORE_* variables into a config object (in place). */
export function applyEnv(config: Record<string, unknown>, env: NodeJS.ProcessEnv): EnvResult {
  const res: EnvResult = { overrides: [], errors: {}, warnings: [] };
  for (const { path, schema, spec } of envTable()) {
    const name = spec.names.find((n) => env[n] !== undefined);
    if (name === undefined) continue;
    if (name !== spec.names[0] && !spec.names[0]!.startsWith('CORE_ENCODER') && !name.startsWith('CORE_FFMPEG')
      && !name.startsWith('CORE_API_AUTH_AUTH0')) {
      res.warnings.push(`${name} is deprecated, use ${spec.names[0]}`);
    }
    try {
      setPath(config, path, parseValue(env[name]!, schema, spec.sep, path));
      res.overrides.push(path);
    } catch (err) {
      res.errors[path] = [`${name}: ${(err as Error).message}`];
    }
  }
  return res;
}
