import { Type, type Static } from '@sinclair/typebox';

/* Config sections of the interface's ConfigData (reference section 6.2), part one. */

const Str = (d: string) => Type.String({ default: d });
const Bool = (d: boolean) => Type.Boolean({ default: d });
const Int = (d: number) => Type.Integer({ default: d });
const List = (d: string[] = []) => Type.Array(Type.String(), { default: d });
const AllowBlock = () => Type.Object({ allow: List(), block: List() }, { default: {} });

export const LogConfig = Type.Object({
  /** `debug`, `info`, `warn`, `error` or `silent`; checked by the config validation (409, not 400). */
  level: Type.String({ default: 'info', description: 'debug, info, warn, error or silent' }),
  topics: List(),
  max_lines: Int(1000),
}, { default: {} });

export const DbConfig = Type.Object({ dir: Str('./data') }, { default: {} });

export const HostConfig = Type.Object({ name: List(), auto: Bool(true) }, { default: {} });

/** A tenant of the identity-provider login (reference: Auth0Tenant). */
export const IdpTenant = Type.Object({
  domain: Type.String({ default: '' }),
  audience: Type.String({ default: '' }),
  clientid: Type.String({ default: '' }),
  users: List(),
});
export type IdpTenant = Static<typeof IdpTenant>;

export const IdpConfig = Type.Object({
  enable: Bool(false),
  tenants: Type.Array(IdpTenant, { default: [] }),
}, { default: {} });

export const ApiAuthConfig = Type.Object({
  enable: Bool(false),
  disable_localhost: Bool(false),
  username: Str(''),
  password: Str(''),
  jwt: Type.Object({ secret: Str('') }, { default: {} }),
  idp: IdpConfig,
  /** Alias of `idp` under the original name; kept identical by the config loader. */
  auth0: IdpConfig,
}, { default: {} });
export type ApiAuthConfig = Static<typeof ApiAuthConfig>;

export const ApiConfig = Type.Object({
  read_only: Bool(false),
  access: Type.Object({
    http: AllowBlock(),
    https: AllowBlock(),
    /** Not in datarhei Core: forwarded-address headers are believed only from these peers. */
    trusted_proxies: Type.Array(Type.String(), {
      default: ['127.0.0.0/8', '::1/128'],
      description: 'CIDRs of reverse proxies whose X-Real-IP / X-Forwarded-For name the client (default: loopback).',
    }),
  }, { default: {} }),
  auth: ApiAuthConfig,
  /** Bound for JSON request bodies (file uploads are not bound by it). Not in datarhei Core. */
  max_body_size_mbytes: Int(4),
}, { default: {} });
export type ApiConfig = Static<typeof ApiConfig>;

export const TlsConfig = Type.Object({
  address: Str(':8181'),
  enable: Bool(false),
  auto: Bool(false),
  email: Str('cert@datarhei.com'),
  cert_file: Str(''),
  key_file: Str(''),
}, { default: {} });

export const DiskCacheConfig = Type.Object({
  enable: Bool(true),
  max_size_mbytes: Int(0),
  ttl_seconds: Int(300),
  max_file_size_mbytes: Int(1),
  types: Type.Object({ allow: List(), block: List(['.m3u8', '.mpd']) }, { default: {} }),
}, { default: {} });

export const DiskStorageConfig = Type.Object({
  dir: Str('./data/disk'),
  max_size_mbytes: Int(0),
  cache: DiskCacheConfig,
}, { default: {} });
export type DiskStorageConfig = Static<typeof DiskStorageConfig>;

export const MemoryStorageConfig = Type.Object({
  auth: Type.Object({ enable: Bool(true), username: Str('admin'), password: Str('') }, { default: {} }),
  max_size_mbytes: Int(0),
  purge: Bool(false),
}, { default: {} });
export type MemoryStorageConfig = Static<typeof MemoryStorageConfig>;

export const S3StorageConfig = Type.Object({
  name: Str(''),
  mountpoint: Str(''),
  auth: Type.Object({ enable: Bool(false), username: Str(''), password: Str('') }, { default: {} }),
  endpoint: Str(''),
  access_key_id: Str(''),
  secret_access_key: Str(''),
  bucket: Str(''),
  region: Str(''),
  use_ssl: Bool(true),
});

export const StorageConfig = Type.Object({
  mimetypes_file: Str(''),
  disk: DiskStorageConfig,
  memory: MemoryStorageConfig,
  s3: Type.Array(S3StorageConfig, { default: [] }),
  cors: Type.Object({ origins: List(['*']) }, { default: {} }),
}, { default: {} });
export type StorageConfig = Static<typeof StorageConfig>;

export { Str, Bool, Int, List, AllowBlock };
