import { Bool, Int, section, Type, type Static } from '../../sdk/index.ts';
import { MAX_GLOB_LENGTH } from './glob.ts';

/** The plugin's settings: the `iam` section of the configuration. */
export const IamConfig = section({
  enable: [Bool(false), 'Users and policies (plugin `iam`, `/api/v3/iam/user`): users with their own credentials and policies, stored in `<db.dir>/plugins/iam/users.json`. The config file\'s API user stays the superuser.'],
  max_users: [Int(1000, { minimum: 1, maximum: 100_000 }), 'Users that may exist at once; one more is refused with 429.'],
  max_policies: [Int(100, { minimum: 1, maximum: 10_000 }), 'Policies one user may have; more are refused with 400.'],
  fail_delay_ms: [Int(1000, { minimum: 0, maximum: 3_600_000 }), 'After a wrong password of a user at `POST /api/login`, that user\'s logins are refused for this long, doubling with each further failure (0 = never), from any address (the `api.auth` slowing counts per address).'],
  fail_delay_max_ms: [Int(30_000, { minimum: 0, maximum: 86_400_000 }), 'Longest refusal of a user\'s logins after repeated wrong passwords.'],
});
export type IamConfig = Static<typeof IamConfig>;

/** A user name: letters, digits and `_.@+-`, 1 to 64, not starting with a sign; `$anon` is the anonymous user. */
export const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}$';
/** The pseudo-user whose policies say what a caller without credentials may do (the successor's). */
export const ANON = '$anon';
/** Secrets one list of a user's service credentials may hold. */
export const MAX_SECRETS = 16;
const SECRET = Type.String({ maxLength: 256 });
const secrets = (what: string) => Type.Optional(Type.Array(SECRET, {
  maxItems: MAX_SECRETS,
  description: `${what}; answers show each as "" (a "" written back at the same place keeps the stored one)`,
}));

export const IamPolicy = Type.Object({
  domain: Type.Optional(Type.String({ maxLength: 256, description: 'a glob of domains (`$none`, the default: processes and requests without one)' })),
  types: Type.Array(Type.String({ maxLength: 16 }), { minItems: 1, maxItems: 8, description: 'api, fs, process, rtmp, srt, webrtc, hls, iam' }),
  resource: Type.String({ minLength: 1, maxLength: MAX_GLOB_LENGTH, description: 'a glob with `/` as separator (`live/customer-a/*`, `/api/v3/process/**`)' }),
  actions: Type.Array(Type.String({ maxLength: 16 }), { minItems: 1, maxItems: 16, description: 'HTTP methods, read/write/command, PLAY/PUBLISH; `*` or `any`: all' }),
});
export type IamPolicy = Static<typeof IamPolicy>;

export const IamUserAuth = Type.Object({
  api: Type.Optional(Type.Object({
    userpass: Type.Optional(Type.Object({
      enable: Type.Optional(Type.Boolean()),
      password: Type.Optional(Type.String({ maxLength: 1024, description: 'stored as a scrypt hash; answers show ""; "" written back keeps it' })),
    })),
    auth0: Type.Optional(Type.Object({
      enable: Type.Optional(Type.Boolean()),
      user: Type.Optional(Type.String({ maxLength: 256 })),
      tenant: Type.Optional(Type.Object({
        domain: Type.Optional(Type.String({ maxLength: 256 })),
        audience: Type.Optional(Type.String({ maxLength: 512 })),
        client_id: Type.Optional(Type.String({ maxLength: 256 })),
      })),
    })),
  })),
  services: Type.Optional(Type.Object({
    basic: secrets('passwords of Basic auth on the file mounts (user name: this user\'s)'),
    token: secrets('tokens of the stream protocols (`?token=<user>:<token>`)'),
    session: secrets('secrets that sign the session tokens of the file mounts (`PUT /api/v3/session/token/{name}`, read with `?token=`); kept as written (they sign)'),
    srt_passphrase: Type.Optional(Type.Union([Type.String({ maxLength: 79 }), Type.Null()], {
      description: 'the passphrase (10 to 79 bytes) its SRT key `token:<user>:<token>` encrypts with where `srt.passphrase` is set, instead of that one; kept as written (SRT derives the keys from it); answers show ""; "" keeps it, null removes it',
    })),
  })),
});

/** A user as written (POST, PUT) and answered (its secrets as ""). */
export const IamUser = Type.Object({
  name: Type.String({ pattern: NAME_PATTERN, description: 'letters, digits, `_.@+-`, 1 to 64' }),
  alias: Type.Optional(Type.String({ maxLength: 128 })),
  superuser: Type.Optional(Type.Boolean()),
  auth: Type.Optional(IamUserAuth),
  policies: Type.Optional(Type.Array(IamPolicy, { maxItems: 10_000 })),
});
export type IamUser = Static<typeof IamUser>;

export const IamUserUpdate = Type.Partial(IamUser);
export type IamUserUpdate = Static<typeof IamUserUpdate>;

export const NameParams = Type.Object({ name: Type.String({ maxLength: 64 }) });
export const DomainQuery = Type.Object({ domain: Type.Optional(Type.String({ maxLength: 256 })) });

/** One session token asked for (`PUT /api/v3/session/token/{name}`), answered with its `token`. */
export const SessionTokenRequest = Type.Object({
  match: Type.Optional(Type.String({ maxLength: 1024, description: 'glob of the mount paths it reads (`/memfs/live/**`); "" any its user may' })),
  remote: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 256 }), { maxItems: 64 }), Type.Null()], { description: 'globs of the `Referer` hosts it is read from (`*.example.com`); empty: any' })),
  extra: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'carried in the token, for the caller' })),
  ttl_sec: Type.Optional(Type.Integer({ minimum: 0, maximum: 31_536_000, description: 'seconds it holds; 0 or none: 3600' })),
  token: Type.Optional(Type.String({ description: 'the token (answers); "" when the user has no session secret' })),
});
export type SessionTokenRequest = Static<typeof SessionTokenRequest>;
export const UsernameParams = Type.Object({ username: Type.String({ maxLength: 64 }) });
