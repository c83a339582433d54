import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../sdk/index.ts';
import { IAM_SUBJECT } from './api.ts';
import { compileGlob } from './glob.ts';
import { NO_DOMAIN, type Policy } from './policy.ts';
import type { IamPolicy } from './schema.ts';
import { checkedPolicies, type StoredUser, type Users } from './users.ts';

/*
 * Delegated user management (issue 49.2, the `iam` type): a user that is no superuser may read the
 * users its `iam` policies allow it to `read` (by name, in the domain of `?domain=`) and add,
 * change and delete those it may `write`, within its own rights: it never makes or changes a
 * superuser, and every policy of a user it writes (before and after) must lie inside one of its
 * own policies, so it can neither grant more than it holds nor take over (by setting a password
 * or a key) a user that holds more. Its own user is no exception: it can lower its rights, never
 * raise them. "Inside" is decided conservatively, without matching glob against glob: the same
 * pattern, a literal the own pattern matches, or a pattern that starts with the literal part of
 * an own pattern ending in `**`; the types and actions a subset; the domain the same way.
 */

const forbidden = (what: string) => new ApiError(403, 'Forbidden', [what], 'IAM_FORBIDDEN');
const ALL = new Set(['*', 'ANY']);

/** Whether every subject pattern `p` matches, pattern `g` matches too (conservative: false when unsure). */
export function globWithin(p: string, g: string): boolean {
  if (p === g) return true;
  try {
    const lit = compileGlob(p).literal;
    if (lit !== undefined) return compileGlob(g).match(lit);
    if (!g.endsWith('**')) return false;
    const prefix = g.slice(0, -2);
    return compileGlob(prefix).literal === prefix && p.startsWith(prefix);
  } catch {
    return false;
  }
}

/** Whether `g` allows everything `p` allows (for one type of `p`). */
export function policyWithin(p: Policy, type: string, g: Policy): boolean {
  if (!g.types.includes(type)) return false;
  const own = new Set(g.actions.map((a) => a.toUpperCase()));
  const wanted = p.actions.map((a) => a.toUpperCase());
  const actions = [...own].some((a) => ALL.has(a)) || wanted.every((a) => !ALL.has(a) && own.has(a));
  return actions && globWithin(p.domain || NO_DOMAIN, g.domain || NO_DOMAIN) && globWithin(p.resource, g.resource);
}

/** The first of `list` that `own` does not cover, described; undefined when all are covered. */
export function uncovered(list: readonly Policy[], own: readonly Policy[]): string | undefined {
  for (const p of list) {
    for (const type of p.types) {
      if (!own.some((g) => policyWithin(p, type, g))) return `${type} ${p.actions.join(',')} on ${p.resource.slice(0, 100)} in ${p.domain || NO_DOMAIN}`;
    }
  }
  return undefined;
}

/** What the IAM routes ask about their caller. */
export class Delegation {
  readonly #users: Users;

  constructor(users: Users) { this.#users = users; }

  /** The caller's user when it is an IAM user that is no superuser (a delegate); undefined for a superuser. */
  delegate(req: FastifyRequest): StoredUser | undefined {
    const subject = req.auth?.user;
    if (!subject?.startsWith(IAM_SUBJECT)) return undefined;
    const u = this.#users.stored(subject.slice(IAM_SUBJECT.length));
    // a user gone meanwhile may nothing (the auth plugin refused it already, but a race)
    if (!u) throw forbidden('the caller is no user any more');
    return u.superuser ? undefined : u;
  }

  /** Whether `d` may `action` the user `name` in `domain`. */
  may(d: StoredUser, action: 'read' | 'write', name: string, domain: string | undefined): boolean {
    return this.#users.index.allowed({ user: d.name, type: 'iam', resource: name, action, domain: domain || NO_DOMAIN });
  }

  /**
   * A write by delegate `d`: of user `name` (as stored now: `target`, none for a new one) into one
   * with `next` (the fields given). Throws 403 when it is not within `d`'s rights.
   */
  checkWrite(d: StoredUser, q: { name: string; target?: StoredUser; domain?: string; superuser?: boolean; policies?: readonly IamPolicy[] }): void {
    if (!this.may(d, 'write', q.name, q.domain)) throw forbidden(`no iam policy allows write of user ${q.name.slice(0, 64)}`);
    if (q.superuser || q.target?.superuser) throw forbidden('only a superuser makes or changes a superuser');
    const own = d.policies;
    const before = q.target ? uncovered(q.target.policies, own) : undefined;
    if (before) throw forbidden(`user ${q.name.slice(0, 64)} holds more than the caller: ${before}`);
    // a policy that does not compile is a 400 (as for a superuser), before asking whether it is within
    const after = q.policies ? uncovered(checkedPolicies(q.policies), own) : undefined;
    if (after) throw forbidden(`a policy beyond the caller's own: ${after}`);
  }
}
