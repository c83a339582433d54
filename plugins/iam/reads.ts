import type { BasicCredentials, FsServeRefusal, FsServeRequest, RunCredentials } from '../../sdk/index.ts';
import { basicCredentialsMatch, parseBasicAuthorization, runMayRead } from '../../sdk/index.ts';
import { compileGlob } from './glob.ts';
import { NO_DOMAIN } from './policy.ts';
import { ANON } from './schema.ts';
import { checkKey } from './secrets.ts';
import { sessionSubject, verifySession } from './session-token.ts';
import type { StoredUser, Users } from './users.ts';

/*
 * Reads of the public mounts by `fs` policies (issue 49.2, the successor's rule): a GET or HEAD of
 * `/memfs/live/x.m3u8` (the mount's path; on the disk mount the path itself) is decided for
 * - `?token=<session token>` (session-token.ts): the token's user, if the token holds (its `match`
 *   glob names the path, its `remote` globs the `Referer`'s host); else 403;
 * - `Authorization: Basic`: the user whose `services.basic` holds the password, or a live run's
 *   credential (a child of the service reading what another wrote, `{memfs}` with its auth on), or
 *   the mount's own write credential (`storage.memory.auth`: all of its mount); else 401;
 * - no credential: `$anon`.
 * That user's `fs` policies must allow `GET` on the path (a HEAD is a GET without its body) in
 * the path's domain: the folder below the mount when some policy names it as a domain, else
 * `$none`. A refusal of `$anon` is a 401 with the Basic challenge, as the successor answers.
 * While `$anon` may read every path of every mount (its default policy `fs` `/**` `GET`, `HEAD`,
 * `OPTIONS`) and no policy names a domain, nothing needs deciding: `needed` is false and the
 * plugin does not tap the reads (the serving threads keep serving them).
 */

/** The user name of a run's Basic credential (the SDK's `runUserinfo`). */
const RUN_USER = 'process';
const CHALLENGE = Object.freeze({ 'WWW-Authenticate': 'Basic realm=Restricted' });
const EVERY_PATH = new Set(['/**', '**']);
/** A domain without glob characters (glob.ts's specials): a folder of that name is the domain's. */
const LITERAL = /^[^*?[\]{}\\]+$/;

const refuse = (status: 401 | 403, detail: string, code: string): FsServeRefusal =>
  ({ status, message: status === 401 ? 'Unauthorized' : 'Forbidden', details: [detail], code, ...(status === 401 ? { headers: CHALLENGE } : {}) });

/** The `token` query value, if any (a session token: base64url and dots, nothing to decode). */
export function tokenParam(query: string): string | undefined {
  if (query === '') return undefined;
  const v = new URLSearchParams(query).get('token');
  return v === null || v === '' ? undefined : v;
}

/** What the gate knows of the mounts (by prefix, `/` for the disk's). */
export interface GateMounts {
  /** Mounts whose reads their own plugin decides (LL-HLS: a stream's key and `hls` policies). */
  exempt: ReadonlySet<string>;
  /** A mount's own write credential, which reads all of it. */
  creds: ReadonlyMap<string, BasicCredentials>;
}

export class ReadGate {
  readonly #users: Users;
  readonly #mounts: () => GateMounts;
  readonly #runs: () => RunCredentials | undefined;
  #needed = true;
  /** Domains some policy names literally: a first folder with such a name is that domain's. */
  #domains: ReadonlySet<string> = new Set();

  constructor(users: Users, mounts: () => GateMounts, runs: () => RunCredentials | undefined = () => undefined) {
    [this.#users, this.#mounts, this.#runs] = [users, mounts, runs];
    this.refresh();
  }

  /** Whether reads need a decision (see above); recomputed by `refresh` after every change of the users. */
  get needed(): boolean {
    return this.#needed;
  }

  refresh(): void {
    const domains = new Set<string>();
    let anonAll = false;
    for (const u of this.#users.all()) {
      for (const p of u.policies) {
        if (p.domain !== NO_DOMAIN && LITERAL.test(p.domain)) domains.add(p.domain);
        if (u.name === ANON && readsAll(p)) anonAll = true;
      }
    }
    this.#domains = domains;
    this.#needed = !anonAll || domains.size > 0;
  }

  /** `fsServeHooksRef.preServe`: undefined to serve, else the refusal. */
  decide(req: FsServeRequest): FsServeRefusal | undefined {
    if (!this.#needed) return undefined;
    const mounts = this.#mounts();
    if (mounts.exempt.has(req.mount)) return undefined;
    const path = req.mount === '/' ? req.path : req.mount + req.path;
    const domain = this.#domainOf(req.path);
    const token = tokenParam(req.query);
    if (token !== undefined) return this.#session(token, path, domain, req.headers.referer);
    const given = parseBasicAuthorization(req.headers.authorization);
    if (given === 'malformed') return { status: 400, message: 'Bad Request', details: ['a Basic credential that is not base64'], code: 'IAM_FS_MALFORMED' };
    if (given === 'missing') {
      return this.#may(ANON, path, domain) ? undefined : refuse(401, `authentication required for ${path.slice(0, 200)}`, 'IAM_FS_UNAUTHORIZED');
    }
    const own = mounts.creds.get(req.mount);
    if (own && basicCredentialsMatch(given, own)) return undefined;
    if (given.username === RUN_USER) {
      const run = this.#run(given.password, path);
      if (run === 'named') return undefined;
      // a live run's read of what its command does not name: as anyone's
      if (run === 'other') return this.#may(ANON, path, domain) ? undefined : refuse(403, `the run may not read ${path.slice(0, 200)}`, 'IAM_FS_FORBIDDEN');
    }
    const u = this.#users.stored(given.username);
    if (!u || u.name === ANON || !u.auth.services.basic.some((h) => checkKey(given.password, h))) return refuse(401, 'unauthorized', 'IAM_FS_UNAUTHORIZED');
    return this.#may(u.name, path, domain, u) ? undefined : refuse(403, `user ${u.name} may not read ${path.slice(0, 200)}`, 'IAM_FS_FORBIDDEN');
  }

  #session(token: string, path: string, domain: string, referer: string | undefined): FsServeRefusal | undefined {
    const subject = sessionSubject(token);
    const u = subject === undefined ? undefined : this.#users.byNameOrAlias(subject);
    if (!u || u.name === ANON) return refuse(403, 'invalid token', 'IAM_FS_TOKEN');
    const c = verifySession(token, sessionSecrets(u), [u.name, ...(u.alias ? [u.alias] : [])], Math.floor(Date.now() / 1000));
    if (typeof c === 'string') return refuse(403, `invalid token: ${c}`, 'IAM_FS_TOKEN');
    const { match, remote } = c.data;
    if (typeof match === 'string' && match !== '' && !globMatches(match, path)) return refuse(403, `the token does not name ${path.slice(0, 200)}`, 'IAM_FS_TOKEN');
    if (Array.isArray(remote) && remote.length > 0 && !remoteAllowed(remote, referer)) return refuse(403, 'the token is not for this referrer', 'IAM_FS_TOKEN');
    return this.#may(u.name, path, domain, u) ? undefined : refuse(403, `user ${u.name} may not read ${path.slice(0, 200)}`, 'IAM_FS_FORBIDDEN');
  }

  /**
   * A live run's `<process id>:<token>`, for what its command names (`runMayRead`: its paths, the
   * folders of its playlists): a token read from a process's state, or a playlist naming
   * `../other/x.ts`, read every mount before.
   */
  #run(password: string, path: string): 'named' | 'other' | undefined {
    const cut = password.lastIndexOf(':');
    const grant = cut < 0 ? undefined : this.#runs()?.find(password.slice(cut + 1));
    if (grant === undefined || grant.processId !== password.slice(0, cut)) return undefined;
    return runMayRead(grant, path) ? 'named' : 'other';
  }

  #may(name: string, path: string, domain: string, u?: StoredUser): boolean {
    return u?.superuser === true || this.#users.index.allowed({ user: name, type: 'fs', resource: path, action: 'GET', domain });
  }

  /** The domain of a path below its mount: its first folder when a policy names it, else `$none`. */
  #domainOf(path: string): string {
    if (this.#domains.size === 0) return NO_DOMAIN;
    const end = path.indexOf('/', 1);
    const first = end < 0 ? path.slice(1) : path.slice(1, end);
    return this.#domains.has(first) ? first : NO_DOMAIN;
  }
}

/** A policy of `$anon` that lets anyone read every path of every mount. */
function readsAll(p: { domain: string; types: readonly string[]; resource: string; actions: readonly string[] }): boolean {
  const actions = p.actions.map((a) => a.toUpperCase());
  return p.types.includes('fs') && EVERY_PATH.has(p.resource) && p.domain === NO_DOMAIN && actions.some((a) => a === 'GET' || a === 'ANY' || a === '*');
}

/** The session secrets of a user (stored as written, `plain$<secret>`; hashes kept from before cannot sign). */
export function sessionSecrets(u: StoredUser): string[] {
  return u.auth.services.session.filter((s) => s.startsWith('plain$')).map((s) => s.slice(6));
}

/** Compiled globs of tokens' `match` and `remote` (a player's token is read on every request; a few hundred kept). */
const compiled = new Map<string, ReturnType<typeof compileGlob> | null>();

function globMatches(glob: string, path: string): boolean {
  let g = compiled.get(glob);
  if (g === undefined) {
    try {
      g = compileGlob(glob);
    } catch {
      g = null;
    }
    if (compiled.size >= 256) compiled.clear();
    compiled.set(glob, g);
  }
  return g !== null && g.match(path);
}

/** Whether the `Referer`'s host matches one of the token's `remote` globs (`.` separates; no `Referer`: no). */
function remoteAllowed(remote: readonly unknown[], referer: string | undefined): boolean {
  let host = '';
  try { host = referer ? new URL(referer).host : ''; } catch { host = ''; }
  if (host === '') return false;
  return remote.some((r) => typeof r === 'string' && globMatches(r.replaceAll('.', '/'), host.replaceAll('.', '/')));
}

const LINE_URI = /URI="([^"]*)"/g;

/**
 * A playlist read with a session token, its token carried on: every relative URI it names
 * (segment and playlist lines, `URI="..."` of its tags) gets `token=` unless it has one, so a
 * player that was given `x.m3u8?token=` reads the segments with it. A URI with a scheme or a host
 * of its own (`https://cdn...`, `//cdn...`) is left alone: the token never leaves for another server.
 */
export function carryToken(body: string, token: string): string {
  const add = (uri: string) => {
    if (/[?&]token=/.test(uri) || /^([a-z][a-z0-9+.-]*:|\/\/)/i.test(uri)) return uri;
    return `${uri}${uri.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
  };
  return body.split('\n').map((line) => {
    const t = line.trim();
    if (t === '') return line;
    if (t.startsWith('#')) return t.includes('URI="') ? line.replace(LINE_URI, (_m, uri: string) => `URI="${add(uri)}"`) : line;
    return add(t);
  }).join('\n');
}
