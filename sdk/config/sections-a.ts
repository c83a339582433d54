import { Type, type Static } from '@sinclair/typebox';
import { describe } from './describe.ts';
import { Formatted, MAX_TIMER_SECONDS } from './formats.ts';

/* Config sections of the interface's ConfigData (reference section 6.2), part one. */

const Str = (d: string) => Type.String({ default: d });
const Bool = (d: boolean) => Type.Boolean({ default: d });
/** An integer key with its default and its bounds, if any. */
const Int = (d: number, bounds: { minimum?: number; maximum?: number } = {}) => Type.Integer({ default: d, ...bounds });
/** A port key (0 to 65535). */
const Port = (d: number) => Int(d, { minimum: 0, maximum: 65535 });
const List = (d: string[] = []) => Type.Array(Type.String(), { default: d });
const AllowBlock = () => Type.Object({ allow: List(), block: List() }, { default: {} });

export const LogConfig = describe(Type.Object({
  /** `debug`, `info`, `warn`, `error` or `silent`; checked by the config validation (409, not 400). */
  level: Type.String({ default: 'info' }),
  topics: List(),
  max_lines: Int(1000),
  /** Not in datarhei Core: what the terminal output looks like (the ring always keeps JSON). */
  format: Type.String({ default: 'auto' }),
}, { default: {} }), {
  level: 'Application log level: debug, info, warn, error or silent.',
  topics: 'Components to show on the console (empty = all).',
  max_lines: 'Log lines kept for `GET /api/v3/log`.',
  format: 'Standard output: `json` (one JSON object a line), `console` (the `GET /api/v3/log` format) or `auto` (console on a terminal, JSON otherwise).',
});

export const DbConfig = describe(Type.Object({
  dir: Formatted('path', './data'),
  /** Not in datarhei Core: bounds what the metadata routes can make db.json (and memory) hold. */
  max_metadata_mbytes: Type.Integer({ default: 16, minimum: 0 }),
}, { default: {} }), {
  dir: 'Folder of `db.json` (processes, metadata) and plugin state.',
  max_metadata_mbytes: 'Largest total of process and global metadata in MiB, as db.json stores it (0 = no limit); '
    + 'a metadata PUT that would grow it beyond gets 413, before its body is read when its Content-Length '
    + '(with the bodies being received) cannot fit.',
});

export const HostConfig = describe(Type.Object({ name: Type.Array(Formatted('host-name'), { default: [] }), auto: Bool(true) }, { default: {} }), {
  name: 'Public host names of this instance (used in URLs it hands out).',
  auto: 'Detect public host names when `host.name` is empty (not done by this build: no outbound calls).',
});

/** A tenant of the identity-provider login (reference: Auth0Tenant). */
export const IdpTenant = Type.Object({
  domain: Type.String({ default: '' }),
  audience: Type.String({ default: '' }),
  clientid: Type.String({ default: '' }),
  users: List(),
});
export type IdpTenant = Static<typeof IdpTenant>;

export const IdpConfig = describe(Type.Object({
  enable: Bool(false),
  tenants: Type.Array(IdpTenant, { default: [] }),
}, { default: {} }), {
  enable: 'Accept identity-provider tokens at `POST /api/login` (alias `api.auth.auth0`).',
  tenants: 'Tenants: `{domain, audience, clientid, users}`; env: base64 JSON or `auth0://clientid@domain?aud=..&user=..`, comma-separated.',
});

export const ApiAuthConfig = describe(Type.Object({
  enable: Bool(false),
  disable_localhost: Bool(false),
  username: Str(''),
  password: Str(''),
  jwt: Type.Object({ secret: Str('') }, { default: {} }),
  idp: IdpConfig,
  /** Alias of `idp` under the original name; kept identical by the config loader. */
  auth0: IdpConfig,
}, { default: {} }), {
  enable: 'Require a JWT (from `POST /api/login`) on the API.',
  disable_localhost: 'Let requests from 127.0.0.1 and ::1 in without a token.',
  username: 'Login user name.',
  password: 'Login password.',
  'jwt.secret': 'Part of the token signing key (with user name and password); generated on first start.',
});
export type ApiAuthConfig = Static<typeof ApiAuthConfig>;

export const ApiConfig = describe(Type.Object({
  read_only: Bool(false),
  access: Type.Object({
    http: AllowBlock(),
    https: AllowBlock(),
    /** Not in datarhei Core: forwarded-address headers are believed only from these peers. */
    trusted_proxies: Type.Array(Type.String(), {
      default: [],
      description: 'CIDRs of reverse proxies whose X-Real-IP / X-Forwarded-For name the client (default: none; '
        + 'a proxy on this host needs `127.0.0.1/32`).',
    }),
  }, { default: {} }),
  auth: ApiAuthConfig,
  /** Bound for JSON request bodies (file uploads are not bound by it). Not in datarhei Core. */
  max_body_size_mbytes: Type.Integer({ default: 4, minimum: 1, maximum: 1024 }),
}, { default: {} }), {
  read_only: 'Refuse every API call that changes state.',
  'access.http.allow': 'CIDRs allowed to use the API over HTTP (empty = all).',
  'access.http.block': 'CIDRs refused on the API over HTTP (wins over allow).',
  'access.https.allow': 'CIDRs allowed to use the API over HTTPS (empty = all).',
  'access.https.block': 'CIDRs refused on the API over HTTPS.',
  max_body_size_mbytes: 'Largest JSON request body in MiB (413 above it), 1 to 1024; file uploads are not bound by it.',
});
export type ApiConfig = Static<typeof ApiConfig>;

export const TlsConfig = describe(Type.Object({
  address: Formatted('listen-address', ':8181'),
  enable: Bool(false),
  auto: Bool(false),
  email: Formatted('email-or-empty', 'cert@datarhei.com'),
  cert_file: Formatted('path', ''),
  key_file: Formatted('path', ''),
  /** Not in datarhei Core: which ACME CA `tls.auto` asks (a staging or private CA). */
  acme_directory: Formatted('http-url', 'https://acme-v02.api.letsencrypt.org/directory'),
}, { default: {} }), {
  address: 'HTTPS listen address.',
  enable: 'Serve HTTPS as well.',
  auto: 'Obtain certificates automatically by ACME (HTTP-01 on `address`, names from host.name; stored in `<db.dir>/cert`).',
  email: 'Contact address for certificates.',
  cert_file: 'Certificate file (PEM) when not automatic.',
  key_file: 'Key file (PEM) when not automatic.',
  acme_directory: "ACME directory URL of the CA for `tls.auto` (default: Let's Encrypt).",
});

export const DiskCacheConfig = Type.Object({
  enable: Bool(true),
  max_size_mbytes: Type.Integer({ default: 0, minimum: 0 }),
  ttl_seconds: Type.Integer({ default: 300, maximum: MAX_TIMER_SECONDS }),
  max_file_size_mbytes: Type.Integer({ default: 1, minimum: 0 }),
  types: Type.Object({ allow: List(), block: List(['.m3u8', '.mpd']) }, { default: {} }),
}, { default: {} });

export const DiskStorageConfig = describe(Type.Object({
  dir: Formatted('path', './data/disk'),
  max_size_mbytes: Int(0),
  cache: DiskCacheConfig,
}, { default: {} }), {
  dir: 'Root of the disk filesystem, served at `/` and `{diskfs}`.',
  max_size_mbytes: 'Capacity of the disk filesystem in MiB (0 = unlimited); writes beyond get 507.',
  'cache.enable': 'Cache disk files in memory for the public route.',
  'cache.max_size_mbytes': 'Cache size in MiB (0 = unlimited).',
  'cache.ttl_seconds': 'How long a cached file is kept.',
  'cache.max_file_size_mbytes': 'Largest file that is cached, MiB.',
  'cache.types.allow': 'File extensions to cache (empty = all).',
  'cache.types.block': 'File extensions never cached.',
});
export type DiskStorageConfig = Static<typeof DiskStorageConfig>;

export const S3StorageConfig = Type.Object({
  name: Str(''),
  mountpoint: Str(''),
  auth: Type.Object({ enable: Bool(false), username: Str(''), password: Str('') }, { default: {} }),
  endpoint: Formatted('endpoint', ''),
  access_key_id: Str(''),
  secret_access_key: Str(''),
  bucket: Str(''),
  region: Str(''),
  use_ssl: Bool(true),
});

export const StorageConfig = describe(Type.Object({
  mimetypes_file: Formatted('path', ''),
  disk: DiskStorageConfig,
  s3: Type.Array(S3StorageConfig, { default: [] }),
  cors: Type.Object({ origins: List(['*']) }, { default: {} }),
}, { default: {} }), {
  mimetypes_file: 'A mime.types file for Content-Type by extension (empty = built-in table).',
  s3: 'S3 filesystems: each entry is a filesystem of type `s3` at its mountpoint (the `s3-fs` plugin; `plugins/s3-fs/README.md`).',
  'cors.origins': 'Origins allowed by CORS on the filesystem routes.',
});
export type StorageConfig = Static<typeof StorageConfig>;

export { Str, Bool, Int, Port, List, AllowBlock };
