import { compileGlob, type Glob } from './glob.ts';

/*
 * Policy decisions of IAM (issue 49), as the reference's successor defines them: a user's policy
 * `{domain, types, resource, actions}` allows an action of one of its types on the resources its
 * glob matches, in the domains its domain glob matches; a superuser may do everything; anything
 * not allowed is denied. Compiled once per change of the users (`PolicyIndex`), decided without
 * allocation on the hot path: per user and type, the policies with a literal resource in a map,
 * the others in a short list of compiled globs (glob.ts).
 */

/** The kinds of resource a policy names (the successor's, plus the players this service has). */
export const POLICY_TYPES = ['api', 'fs', 'process', 'rtmp', 'srt', 'webrtc', 'hls', 'iam'] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];

/** The domain of a process or a request that names none (the successor's `$none`). */
export const NO_DOMAIN = '$none';

export interface Policy {
  domain: string;
  types: string[];
  resource: string;
  /** HTTP methods (`api`, `fs`), `read`/`write`/`command` (`process`, `iam`), `PLAY`/`PUBLISH` (streams); `*` or `any`: all. */
  actions: string[];
}

export interface PolicyUser {
  name: string;
  superuser?: boolean;
  policies: readonly Policy[];
}

/** One question: may `user` do `action` on `resource` of `type` in `domain`? */
export interface Decision {
  user: string;
  domain?: string;
  type: PolicyType;
  resource: string;
  action: string;
}

interface Rule {
  domain: Glob;
  /** Upper-cased actions, or undefined for all. */
  actions: ReadonlySet<string> | undefined;
  resource: Glob;
}

interface TypeRules {
  /** Rules whose resource is a literal, by that literal. */
  exact: Map<string, Rule[]>;
  /** Rules whose resource is a glob. */
  globs: Rule[];
}

/** A policy that cannot be compiled: which one and why (the API answers 400 with it). */
export class PolicyError extends Error {
  readonly index: number;

  constructor(index: number, message: string) {
    super(`policies[${index}]: ${message}`);
    this.index = index;
  }
}

const TYPES: ReadonlySet<string> = new Set(POLICY_TYPES);
const ALL = new Set(['*', 'ANY']);

/** Compiles one user's policies: by type, literal resources apart. Throws PolicyError. */
export function compilePolicies(policies: readonly Policy[]): Map<string, TypeRules> {
  const out = new Map<string, TypeRules>();
  policies.forEach((p, i) => {
    const types = p.types.map((t) => t.toLowerCase());
    const bad = types.find((t) => !TYPES.has(t));
    if (bad !== undefined) throw new PolicyError(i, `unknown type '${bad}' (one of ${POLICY_TYPES.join(', ')})`);
    let rule: Rule;
    try {
      const actions = p.actions.map((a) => a.toUpperCase());
      rule = {
        domain: compileGlob(p.domain === '' ? NO_DOMAIN : p.domain),
        resource: compileGlob(p.resource),
        actions: actions.some((a) => ALL.has(a)) ? undefined : new Set(actions),
      };
    } catch (err) {
      throw new PolicyError(i, `a glob that does not compile: ${(err as Error).message}`);
    }
    for (const t of new Set(types)) {
      let rules = out.get(t);
      if (!rules) out.set(t, (rules = { exact: new Map(), globs: [] }));
      const lit = rule.resource.literal;
      if (lit === undefined) rules.globs.push(rule);
      else {
        const list = rules.exact.get(lit);
        if (list) list.push(rule);
        else rules.exact.set(lit, [rule]);
      }
    }
  });
  return out;
}

function allows(r: Rule, domain: string, action: string): boolean {
  return (r.actions === undefined || r.actions.has(action)) && r.domain.match(domain);
}

/** Every user's compiled policies; rebuilt (or updated per user) when users change. */
export class PolicyIndex {
  readonly #users = new Map<string, { superuser: boolean; rules: Map<string, TypeRules> }>();

  constructor(users: Iterable<PolicyUser> = []) {
    for (const u of users) this.set(u);
  }

  /** Adds or replaces one user's policies; throws PolicyError and keeps the old ones then. */
  set(u: PolicyUser): void {
    this.#users.set(u.name, { superuser: u.superuser === true, rules: compilePolicies(u.policies) });
  }

  delete(name: string): void {
    this.#users.delete(name);
  }

  /** Whether the user may; unknown users may nothing. Actions compare without case. */
  allowed(q: Decision): boolean {
    const u = this.#users.get(q.user);
    if (!u) return false;
    if (u.superuser) return true;
    const rules = u.rules.get(q.type);
    if (!rules) return false;
    const domain = q.domain === undefined || q.domain === '' ? NO_DOMAIN : q.domain;
    const action = q.action.toUpperCase();
    const exact = rules.exact.get(q.resource);
    if (exact) for (const r of exact) if (allows(r, domain, action)) return true;
    for (const r of rules.globs) if (allows(r, domain, action) && r.resource.match(q.resource)) return true;
    return false;
  }

  get size(): number {
    return this.#users.size;
  }
}
