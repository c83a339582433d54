import type { FastifyRequest } from 'fastify';
import { ApiError, type AuthorizeInput, type LoginValidator, type LoginVerdict } from '../../sdk/index.ts';
import { IAM_SUBJECT, type IamAccess } from './api.ts';
import { checkPassword, hashPassword } from './secrets.ts';
import type { Users } from './users.ts';

/*
 * What an IAM user may do through the API (issue 49, third floor) and how it logs in. The login:
 * `POST /api/login` with the user's name and password (`auth.api.userpass`), checked against its
 * scrypt hash, gives tokens for the subject `iam:<name>`; failures are slowed per user here (the
 * auth plugin slows them per address). A request with such a token: its user must still exist
 * with its login on (401 otherwise: a deleted user's tokens die with it); a superuser may all; the
 * IAM routes are the superusers' (403: no user raises its own rights); anything else needs an
 * `api` policy for the request's method on its path (in the domain of `?domain=`, `$none`
 * without), and a path that is not canonical (`//`, `.` or `..` segments, encoded `/`, `.` or `\`)
 * is refused before any policy is asked.
 */


const forbidden = (what: string) => new ApiError(403, 'Forbidden', [what], 'IAM_FORBIDDEN');
const gone = () => new ApiError(401, 'Unauthorized', ['Missing or invalid JWT token'], 'IAM_USER_GONE');
const NOT_CANONICAL = /\/\/|\/\.\.?(\/|$)|%2f|%2e|%5c|\\/i;

export class IamApiAccess implements IamAccess {
  readonly #users: Users;

  constructor(users: Users) {
    this.#users = users;
  }

  authorizeApi(input: AuthorizeInput, subject: string): ApiError | undefined {
    if (input.access !== 'protected') return undefined;
    const name = subject.slice(IAM_SUBJECT.length);
    const u = this.#users.stored(name);
    if (!subject.startsWith(IAM_SUBJECT) || !u || !u.auth.api.userpass.enable) return gone();
    if (u.superuser) return undefined;
    const r = input.request;
    const url = r.url;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const action = r.method;
    if (NOT_CANONICAL.test(path)) return forbidden(`${action} of a path that is not canonical`);
    if (path === '/api/v3/iam' || path.startsWith('/api/v3/iam/')) return forbidden('the IAM routes are the superusers\'');
    const domain = domainOf(r);
    if (this.#users.index.allowed({ user: name, type: 'api', resource: path, action, domain })) return undefined;
    return forbidden(`no policy allows ${action} ${path.slice(0, 200)}`);
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
