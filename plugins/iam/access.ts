import type { FastifyRequest } from 'fastify';
import {
  ApiError, streamName, type AuthorizeInput, type IngestPeer, type IngestRefusal, type LoginValidator, type LoginVerdict, type ProcessesService, type RunUse,
} from '../../sdk/index.ts';
import { IAM_SUBJECT, type IamAccess } from './api.ts';
import { checkKey, checkPassword, hashPassword } from './secrets.ts';
import { fsFolders, type FolderLister } from './folders.ts';
import { NO_DOMAIN, POLICY_TYPES, type PolicyType } from './policy.ts';
import { ANON } from './schema.ts';
import type { Users } from './users.ts';

/*
 * What an IAM user may do through the API (issue 49, third floor) and how it logs in. The login:
 * `POST /api/login` with the user's name and password (`auth.api.userpass`), checked against its
 * scrypt hash, gives tokens for the subject `iam:<name>`; failures are slowed per user here (the
 * auth plugin slows them per address). A request with such a token: its user must still exist
 * with its login on (401 otherwise: a deleted user's tokens die with it); a superuser may all;
 * anything else needs an `api` policy for the request's method on its path (in the domain of `?domain=`, `$none`
 * without), and a path that is not canonical (`//`, `.` or `..` segments, encoded `/`, `.` or `\`)
 * is refused before any policy is asked. A route of one process (`/api/v3/process/<id>...`, the
 * plugins' too) needs a `process` policy as well: `read` for GET and HEAD, `command` for its
 * command, `write` otherwise, in the process's domain; a route of one user an `iam` policy for
 * its name (the IAM routes check the rest: delegate.ts). The list and a create ask `processAccess`
 * (the core filters and refuses). GraphQL asks `mayApi` for each field's REST twin. The event
 * stream's side routes answer about the whole service: they are the superusers'.
 */


const forbidden = (what: string) => new ApiError(403, 'Forbidden', [what], 'IAM_FORBIDDEN');
const gone = () => new ApiError(401, 'Unauthorized', ['Missing or invalid JWT token'], 'IAM_USER_GONE');
const NOT_CANONICAL = /\/\/|\/\.\.?(\/|$)|%2f|%2e|%5c|\\/i;
const ONE_PROCESS = /^\/api\/v3\/process\/([^/]+)(\/.*)?$/;
/** Routes that answer about the whole service and filter nothing by policy: the superusers'. */
const SUPERUSERS_ONLY = /^\/api\/v3\/events\//;
const ONE_USER = /^\/api\/v3\/iam\/user\/([^/]+)(\/policy)?$/;
const PLAYERS = ['rtmp', 'srt', 'webrtc', 'hls'] as const;
/** A protocol's policy type (RTMPS is RTMP's). */
const KEY_TYPES: Readonly<Record<string, (typeof PLAYERS)[number]>> = { __proto__: null, rtmp: 'rtmp', rtmps: 'rtmp', srt: 'srt', webrtc: 'webrtc', hls: 'hls' } as never;

export class IamApiAccess implements IamAccess {
  readonly #users: Users;
  /** Where a process's domain is read (a route of one process). */
  readonly #processes: ProcessesService | undefined;

  constructor(users: Users, processes?: ProcessesService) {
    [this.#users, this.#processes] = [users, processes];
  }

  streamKey(key: string, q: { protocol: 'rtmp' | 'srt' | 'webrtc' | 'hls'; stream: string; action: 'PLAY' | 'PUBLISH' }): { allowed: boolean; reason: string } {
    const cut = key.indexOf(':');
    const name = key.slice(0, cut);
    const u = cut > 0 ? this.#users.stored(name) : undefined;
    const token = key.slice(cut + 1);
    // one answer for a wrong user and a wrong token: no guesser learns which names exist
    if (!u || !u.auth.services.token.some((h) => checkKey(token, h))) return { allowed: false, reason: 'invalid token' };
    const stream = q.stream.startsWith('/') ? q.stream.slice(1) : q.stream;
    if (u.superuser || this.#users.index.allowed({ user: name, type: q.protocol, resource: stream, action: q.action })) return { allowed: true, reason: '' };
    return { allowed: false, reason: `user ${name} may not ${q.action} ${stream.slice(0, 200)}` };
  }

  /** `ingestHooksRef.decideKey`: a stream client's key, for the stream table's admission (its `keyRefusal` for WebRTC's offers and LL-HLS's playlists). */
  decideKey(peer: IngestPeer, role: 'publish' | 'play'): true | IngestRefusal | undefined {
    if (peer.key === undefined) return undefined;
    const protocol = KEY_TYPES[peer.protocol];
    if (!protocol) return { reason: `no policy type decides ${peer.protocol.slice(0, 32)} clients`, kind: 'forbidden' };
    const d = this.streamKey(peer.key, { protocol, stream: streamName(peer.stream), action: role === 'publish' ? 'PUBLISH' : 'PLAY' });
    return d.allowed ? true : { reason: d.reason, kind: d.reason === 'invalid token' ? 'unauthorized' : 'forbidden' };
  }

  basicKey(username: string, password: string, q: { method: string; path: string }): { allowed: boolean; reason: string } | undefined {
    const u = this.#users.stored(username);
    if (!u || !u.auth.services.basic.some((h) => checkKey(password, h))) return undefined;
    if (u.superuser || this.#users.index.allowed({ user: username, type: 'fs', resource: q.path, action: q.method })) return { allowed: true, reason: '' };
    return { allowed: false, reason: `user ${username} may not ${q.method} ${q.path.slice(0, 200)}` };
  }

  seesEvent(subject: string, event: { subject: Readonly<Record<string, string>> }): boolean {
    return this.#sees(subject, event.subject);
  }

  /** `httpHooksRef.sees` (log lines, metric series, sessions): undefined for callers that are no IAM user's tokens. */
  sees(request: FastifyRequest, about: { process?: string; stream?: string }): boolean | undefined {
    const subject = request.auth?.user;
    return subject?.startsWith(IAM_SUBJECT) ? this.#sees(subject, about) : undefined;
  }

  /** What is about a process it may read or a stream it may play (either); the service's own (naming neither): the superusers'. */
  #sees(subject: string, about: { process?: string; stream?: string }): boolean {
    const name = subject.slice(IAM_SUBJECT.length);
    const u = subject.startsWith(IAM_SUBJECT) ? this.#users.stored(name) : undefined;
    if (!u) return false;
    if (u.superuser) return true;
    const { process: id, stream } = about;
    const ix = this.#users.index;
    if (id !== undefined && ix.allowed({ user: name, type: 'process', resource: id, action: 'read', domain: this.#processes?.get(id)?.domain || NO_DOMAIN })) return true;
    if (stream === undefined) return false;
    const s = stream.startsWith('/') ? stream.slice(1) : stream;
    return PLAYERS.some((type) => ix.allowed({ user: name, type, resource: s, action: 'PLAY' }));
  }

  srtPassphrases(): Readonly<Record<string, string>> {
    return this.#users.srtPassphrases();
  }

  onUsersChanged(fn: () => void): () => void {
    return this.#users.onChange(fn);
  }

  /** `httpHooksRef.processAccess`: undefined for callers that are no IAM user's tokens. */
  processAccess(request: FastifyRequest, q: { id: string; domain: string; action: 'read' | 'write' | 'command' }): boolean | undefined {
    const subject = request.auth?.user;
    if (!subject?.startsWith(IAM_SUBJECT)) return undefined;
    const name = subject.slice(IAM_SUBJECT.length);
    const u = this.#users.stored(name);
    if (!u) return false;
    return u.superuser || this.#users.index.allowed({ user: name, type: 'process', resource: q.id, action: q.action, domain: q.domain || NO_DOMAIN });
  }

  /**
   * `httpHooksRef.processUse`: what a process an IAM user makes names at the listeners (a stream it
   * publishes or plays, a file it writes or reads) needs that user's policy of the type, as if it
   * did it itself; undefined for callers that are no IAM user's tokens.
   */
  processUse(request: FastifyRequest, use: RunUse): boolean | undefined {
    return this.processUseBy(request.auth?.user, use);
  }

  /**
   * `httpHooksRef.processUseBy`: the same for a process's maker at each start of its run (a maker
   * deleted, or whose policy no longer allows a use, fails the start; `since`: when the maker set
   * the process, unix seconds: the user that had the name then decides, found by its former name
   * when renamed since; a user given the name after it is another one, refused);
   * undefined for makers that are no IAM user's subjects.
   */
  processUseBy(subject: string | undefined, use: RunUse, since?: number): boolean | undefined {
    if (!subject?.startsWith(IAM_SUBJECT)) return undefined;
    const held = subject.slice(IAM_SUBJECT.length);
    // the user that had the name when the process was made (renamed since: found by its former name)
    const u = since === undefined ? this.#users.stored(held) : this.#users.heldAt(held, since);
    if (!u) return false;
    const name = u.name;
    if (u.superuser) return true;
    // a type no policy can name (a vendor's listener, an unreadable command): only a superuser's
    if (!(POLICY_TYPES as readonly string[]).includes(use.type)) return false;
    const q = { type: use.type as PolicyType, resource: use.resource, action: use.action };
    if (this.#users.index.allowed({ user: name, ...q })) return true;
    // a file anyone may read without credentials ($anon's policies) its maker could read too
    return use.type === 'fs' && use.action === 'GET' && this.#users.index.allowed({ user: ANON, ...q });
  }

  /**
   * `httpHooksRef.mayChange`: an IAM user replaces or removes only what it made (the user that had
   * the maker's name at `since`: renamed since, still its own; a user given the name later is
   * another), a superuser all; what was made with no IAM user (the operator's) only a superuser.
   * Undefined for callers that are no IAM user's tokens.
   */
  mayChange(request: FastifyRequest, made: { maker: string | undefined; since: number }): boolean | undefined {
    const subject = request.auth?.user;
    if (!subject?.startsWith(IAM_SUBJECT)) return undefined;
    const u = this.#users.stored(subject.slice(IAM_SUBJECT.length));
    if (!u) return false;
    if (u.superuser) return true;
    if (!made.maker?.startsWith(IAM_SUBJECT)) return false;
    return this.#users.heldAt(made.maker.slice(IAM_SUBJECT.length), made.since)?.name === u.name;
  }

  /**
   * `httpHooksRef.makerFolders`: what the user that had the maker's name at `since` may read and
   * write of the files (its `fs` policies' folders; `$anon`'s to read as well), none for a maker
   * gone; undefined for a superuser and for makers that are no IAM user's subjects.
   */
  makerFolders(subject: string, since: number, list: FolderLister): { read: string[]; write: string[] } | undefined {
    if (!subject.startsWith(IAM_SUBJECT)) return undefined;
    const u = this.#users.heldAt(subject.slice(IAM_SUBJECT.length), since);
    if (u?.superuser) return undefined;
    const out = { read: [] as string[], write: [] as string[] };
    if (!u) return out;
    fsFolders(u.policies, list, out);
    const anon = this.#users.stored(ANON);
    return anon ? fsFolders(anon.policies, list, out, true) : out;
  }

  tokenRefusal(subject: string, loginMs: number): ApiError | undefined {
    const u = this.#withLogin(subject);
    return !u || loginMs < u.tokens_since ? gone() : undefined;
  }

  /** The stored user a subject names while it still has an API login on (else undefined: its tokens are gone). */
  #withLogin(subject: string): ReturnType<Users['stored']> {
    const u = subject.startsWith(IAM_SUBJECT) ? this.#users.stored(subject.slice(IAM_SUBJECT.length)) : undefined;
    return u && (u.auth.api.userpass.enable || u.auth.api.auth0.enable) ? u : undefined;
  }

  authorizeApi(input: AuthorizeInput, subject: string): ApiError | undefined {
    if (input.access !== 'protected') return undefined;
    const r = input.request;
    const url = r.url;
    const q = url.indexOf('?');
    return this.mayApi(subject, r.method, q < 0 ? url : url.slice(0, q), domainOf(r));
  }

  mayApi(subject: string, method: string, path: string, domain?: string): ApiError | undefined {
    const u = this.#withLogin(subject);
    if (!u) return gone();
    const name = subject.slice(IAM_SUBJECT.length);
    if (u.superuser) return undefined;
    // HEAD is a GET without the body (fastify answers it from the GET route)
    const action = method === 'HEAD' ? 'GET' : method;
    if (NOT_CANONICAL.test(path)) return forbidden(`${action} of a path that is not canonical`);
    if (SUPERUSERS_ONLY.test(path)) return forbidden(`${path.slice(0, 40)} is the superusers'`);
    if (!this.#users.index.allowed({ user: name, type: 'api', resource: path, action, domain })) return forbidden(`no policy allows ${action} ${path.slice(0, 200)}`);
    const user = ONE_USER.exec(path);
    if (user) return this.#oneUser(name, user[1]!, action, domain);
    const one = ONE_PROCESS.exec(path);
    if (!one) return undefined;
    return this.#oneProcess(name, one[1]!, one[2] ?? '', action, domain);
  }

  /** A route of one user: an `iam` policy for its name (`read` for GET and HEAD, `write` otherwise); the routes check the rest (delegate.ts). */
  #oneUser(caller: string, raw: string, method: string, domain: string | undefined): ApiError | undefined {
    let target: string;
    try {
      target = decodeURIComponent(raw);
    } catch {
      return forbidden('a user name that does not decode');
    }
    const action = method === 'GET' ? 'read' : 'write';
    if (this.#users.index.allowed({ user: caller, type: 'iam', resource: target, action, domain: domain || NO_DOMAIN })) return undefined;
    return forbidden(`no iam policy allows ${action} of user ${target.slice(0, 64)}`);
  }

  /** A route of one process: a `process` policy for its id in its domain (a missing process: the asked domain). */
  #oneProcess(user: string, raw: string, rest: string, method: string, asked: string | undefined): ApiError | undefined {
    let id: string;
    try {
      id = decodeURIComponent(raw);
    } catch {
      return forbidden('a process id that does not decode');
    }
    const action = method === 'GET' || method === 'HEAD' ? 'read' : rest === '/command' ? 'command' : 'write';
    const domain = this.#processes?.get(id)?.domain || asked || NO_DOMAIN;
    if (this.#users.index.allowed({ user, type: 'process', resource: id, action, domain })) return undefined;
    return forbidden(`no policy allows ${action} of process ${id.slice(0, 100)}`);
  }
}

function domainOf(r: FastifyRequest): string | undefined {
  const d = (r.query as Record<string, unknown> | undefined)?.domain;
  return typeof d === 'string' ? d : undefined;
}

/** A password hash of nothing: unknown names cost a check too (no timing tells which names exist). */
let decoy: Promise<string> | undefined;

/** `POST /api/login` for IAM users (a login validator the auth plugin asks). */
export function iamLogin(users: Users, reserved: ReadonlySet<string>, delay: { baseMs: number; maxMs: number }): LoginValidator & { close(): void } {
  // a user's failures, while its refusal lasts (at most one entry per stored user: bounded by iam.max_users)
  const fails = new Map<string, { count: number; until: number }>();
  const sweep = setInterval(() => { const now = Date.now(); for (const [k, v] of fails) if (v.until + delay.maxMs < now) fails.delete(k); }, Math.max(1000, Math.min(60_000, delay.maxMs)));
  sweep.unref();
  return {
    name: 'iam users',
    async check(request: FastifyRequest): Promise<LoginVerdict | undefined> {
      const body = request.body as { username?: unknown; password?: unknown } | null;
      const { username, password } = body ?? {};
      if (typeof username !== 'string' || typeof password !== 'string' || !username || !password || reserved.has(username)) return undefined;
      const u = users.stored(username);
      const hash = u?.auth.api.userpass.enable ? u.auth.api.userpass.hash : '';
      if (!u || hash === '') {
        await checkPassword(password, await (decoy ??= hashPassword('')));
        return undefined;
      }
      const f = fails.get(username);
      // refused as a wrong password is (the answer tells no guesser which names exist, or are locked)
      if (f && f.until > Date.now()) return { reason: 'invalid username or password' };
      if (await checkPassword(password, hash)) {
        fails.delete(username);
        return { subject: `${IAM_SUBJECT}${username}` };
      }
      const count = (f?.count ?? 0) + 1;
      if (delay.baseMs > 0) fails.set(username, { count, until: Date.now() + Math.min(delay.maxMs, delay.baseMs * 2 ** Math.min(30, count - 1)) });
      return { reason: 'invalid username or password' };
    },
    close: () => clearInterval(sweep),
  };
}
