import type { StateDocument } from '../../sdk/index.ts';
import type { IamRecord, IamReplicaService, IamReplication } from './api.ts';
import { iamErrors } from './errors.ts';
import { formerNames, holderAt, namedAt, withFormer, type FormerName } from './former.ts';
import { NO_DOMAIN, PolicyError, PolicyIndex, type Policy } from './policy.ts';
import { ANON, NAME_PATTERN, type IamPolicy, type IamUser, type IamUserUpdate } from './schema.ts';
import { hashKey, hashPassword } from './secrets.ts';

/*
 * The users of IAM (issue 49), a service with no HTTP in it: stored in one state document (written
 * atomically; a change that cannot be written is undone), their policies compiled into one
 * PolicyIndex as they change. Secrets are kept hashed (secrets.ts) and never answered: a view
 * shows each as "", and a "" written back in the same place keeps the stored one, so a client can
 * PUT what it read. `$anon` exists always and has policies only.
 */

const SERVICES = ['basic', 'token', 'session'] as const;
type ServiceKind = (typeof SERVICES)[number];

export interface StoredUser {
  name: string;
  alias: string;
  superuser: boolean;
  auth: {
    api: {
      userpass: { enable: boolean; hash: string };
      auth0: { enable: boolean; user: string; tenant: { domain: string; audience: string; client_id: string } };
    };
    services: Record<ServiceKind, string[]>;
    /** Its own SRT passphrase ('' none), kept as written: SRT derives the stream's keys from it. */
    srt_passphrase: string;
  };
  policies: Policy[];
  created_at: number;
  updated_at: number;
  /**
   * Tokens of logins that began before this (ms) are void: set when the user is made, renamed, or
   * its password or login changes (0 in a store from before: its tokens stand until they expire).
   */
  tokens_since: number;
  /** The names it had before renames and when it got its current one (former.ts): a process it made under one is still its. */
  former: FormerName[];
  named_at: number;
}

export interface UsersDoc {
  users: StoredUser[];
  /** 2: `$anon`'s policies are its own (a store without it gets the defaults once: anyone reads the public mounts). */
  version?: number;
}

/** `$anon`'s policies in a new store: read every public mount, as the successor's default. */
export const anonDefaults = (): Policy[] => [{ domain: NO_DOMAIN, types: ['fs'], resource: '/**', actions: ['GET', 'HEAD', 'OPTIONS'] }];

export interface UsersOptions {
  doc: StateDocument<UsersDoc>;
  maxUsers: number;
  maxPolicies: number;
  /** Names no stored user may have (the config file's API user). */
  reserved: ReadonlySet<string>;
}

const now = () => Math.floor(Date.now() / 1000);

function emptyUser(name: string): StoredUser {
  return {
    name, alias: '', superuser: false,
    auth: {
      api: { userpass: { enable: false, hash: '' }, auth0: { enable: false, user: '', tenant: { domain: '', audience: '', client_id: '' } } },
      services: { basic: [], token: [], session: [] },
      srt_passphrase: '',
    },
    policies: [], created_at: now(), updated_at: now(), tokens_since: Date.now(), former: [], named_at: now(),
  };
}

/**
 * What `users.json` holds, checked at boot (a hand-edited file): each user completed with the
 * defaults of a new one; a file that is no `{users: [...]}` or a user without a valid name stops
 * the boot with the reason (the file is left as it is).
 */
export function parseUsers(raw: unknown, path: string): UsersDoc {
  const list = (raw as { users?: unknown } | null)?.users;
  if (!Array.isArray(list)) throw new Error(`${path}: no "users" list`);
  const name = new RegExp(NAME_PATTERN);
  return {
    ...(typeof (raw as UsersDoc).version === 'number' ? { version: (raw as UsersDoc).version } : {}),
    users: list.map((x: Partial<StoredUser>, i) => {
      if (typeof x?.name !== 'string' || (x.name !== ANON && !name.test(x.name))) throw new Error(`${path}: users[${i}] has no valid name`);
      const d = emptyUser(x.name);
      const api = x.auth?.api;
      const created = typeof x.created_at === 'number' && Number.isSafeInteger(x.created_at) && x.created_at >= 0 ? x.created_at : 0;
      const former = formerNames(x.former);
      return {
        ...d, ...x,
        auth: {
          api: { userpass: { ...d.auth.api.userpass, ...api?.userpass }, auth0: { ...d.auth.api.auth0, ...api?.auth0 } },
          services: { basic: keysOf(x.auth?.services?.basic), token: keysOf(x.auth?.services?.token), session: keysOf(x.auth?.services?.session) },
          srt_passphrase: typeof x.auth?.srt_passphrase === 'string' ? x.auth.srt_passphrase : '',
        },
        policies: Array.isArray(x.policies) ? x.policies : [],
        tokens_since: typeof x.tokens_since === 'number' && Number.isSafeInteger(x.tokens_since) ? x.tokens_since : 0,
        // unknown (a hand-written or older store): 0, older than any process it made (not "now" at each load)
        created_at: created, former, named_at: namedAt(x, former, created),
      };
    }),
  };
}

/** A stored list of secret hashes as read back (a hand-edited file: anything but strings dropped). */
const keysOf = (v: unknown): string[] => (Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string') : []);

/** Policies as written, normalized and compiled once to check them: a 400 naming the one that does not compile. */
export function checkedPolicies(list: readonly IamPolicy[]): Policy[] {
  const policies = normalize(list);
  try {
    new PolicyIndex([{ name: 'check', policies }]);
  } catch (err) {
    if (err instanceof PolicyError) throw iamErrors.invalid(`policies.${err.index}`, err.message.replace(/^policies\[\d+\]: /, ''));
    throw err;
  }
  return policies;
}

/** The policies as the index and the store keep them: domain `$none` when none, types lower case. */
function normalize(list: readonly IamPolicy[]): Policy[] {
  return list.map((p) => ({ domain: p.domain === undefined || p.domain === '' ? NO_DOMAIN : p.domain, types: p.types.map((t) => t.toLowerCase()), resource: p.resource, actions: [...p.actions] }));
}

export class Users implements IamReplicaService {
  readonly #o: UsersOptions;
  /** The shared store's side (the cluster plugin): every change is written there first. */
  #replication: IamReplication | undefined;
  readonly #listeners = new Set<() => void>();
  readonly #saved = new Set<() => void>();
  readonly index = new PolicyIndex();
  /** Users by name; dropped whenever the list changes (every change sets or deletes in `index` too). */
  #byName: Map<string, StoredUser> | undefined;

  constructor(o: UsersOptions) {
    this.#o = o;
    if (!o.doc.data.users.some((u) => u.name === ANON)) o.doc.data.users.push(emptyUser(ANON));
    // a store from before `$anon` had policies of its own (or a new one): anyone reads the public mounts, as before
    if (o.doc.data.version === undefined) {
      const anon = o.doc.data.users.find((u) => u.name === ANON)!;
      if (anon.policies.length === 0) anon.policies = anonDefaults();
      o.doc.data.version = 2;
    }
    for (const u of o.doc.data.users) {
      try {
        this.index.set(u);
      } catch (err) {
        throw new Error(`${o.doc.path}: user '${u.name}': ${(err as Error).message}`);
      }
    }
  }

  list(): IamUser[] {
    // the successor lists $anon last
    const users = this.#o.doc.data.users;
    return [...users.filter((u) => u.name !== ANON), ...users.filter((u) => u.name === ANON)].map(view);
  }

  get(name: string): IamUser {
    return view(this.#find(name));
  }

  /** The stored user (secrets hashed), for decisions (a map, rebuilt after a change); undefined when none. */
  /** Every stored user, `$anon` too (read only). */
  all(): readonly StoredUser[] {
    return this.#o.doc.data.users;
  }

  /** A user by its name, else by its alias (a session token names either). */
  byNameOrAlias(name: string): StoredUser | undefined {
    return this.stored(name) ?? this.#o.doc.data.users.find((u) => u.alias !== '' && u.alias === name);
  }

  stored(name: string): StoredUser | undefined {
    this.#byName ??= new Map(this.#o.doc.data.users.map((u) => [u.name, u]));
    return this.#byName.get(name);
  }

  /** The user named `name` at `since` (unix seconds): renamed since, found by its former name (former.ts). */
  heldAt(name: string, since: number): StoredUser | undefined {
    const u = this.stored(name);
    // (had since before then: no other can have had it; within that second holderAt decides)
    return u && u.named_at < since ? u : holderAt(this.#o.doc.data.users, name, since);
  }

  /** POST: a new user; answers it as stored (secrets as ""). */
  async create(body: IamUser): Promise<IamUser> {
    this.#nameFree(body.name);
    if (this.#o.doc.data.users.filter((u) => u.name !== ANON).length >= this.#o.maxUsers) throw iamErrors.limit(this.#o.maxUsers);
    const u = await this.#apply(emptyUser(body.name), body, true);
    // another request may have taken the name or the last place while the password was hashed
    this.#nameFree(body.name);
    if (this.#o.doc.data.users.filter((x) => x.name !== ANON).length >= this.#o.maxUsers) throw iamErrors.limit(this.#o.maxUsers);
    await this.#replication?.write({ kind: 'put', record: record(u), created: true });
    await this.#place(u, [u.name]);
    return view(u);
  }

  /** PUT: the fields given replace the stored ones (a rename too); answers the user as stored. */
  async update(name: string, body: IamUserUpdate): Promise<IamUser> {
    const old = this.#find(name);
    const next = body.name ?? old.name;
    if (next !== old.name) {
      if (old.name === ANON) throw iamErrors.reserved(ANON);
      this.#nameFree(next);
    }
    const u = await this.#apply(structuredClone(old), { ...body, name: next }, false);
    await this.#replace(old, u);
    return view(u);
  }

  /** PUT .../policy: the user's policies replaced. */
  async setPolicies(name: string, policies: IamPolicy[]): Promise<IamPolicy[]> {
    const old = this.#find(name);
    const u = await this.#apply(structuredClone(old), { name: old.name, policies }, false);
    await this.#replace(old, u);
    return view(u).policies!;
  }

  async remove(name: string): Promise<void> {
    const old = this.#find(name);
    if (old.name === ANON) throw iamErrors.reserved(ANON);
    await this.#replication?.write({ kind: 'delete', name });
    await this.#place(undefined, [name]);
  }

  attach(r: IamReplication): void {
    if (this.#replication) throw new Error('iam: the users are shared by one replication at most');
    this.#replication = r;
  }

  records(): IamRecord[] {
    return this.#o.doc.data.users.map((u) => record(structuredClone(u)));
  }

  /** A user from the shared store (its own writes come back too: a user as stored already is left alone). */
  async apply(r: IamRecord): Promise<void> {
    const u = parseUsers({ users: [r] }, 'the shared user').users[0]!;
    if (u.name !== ANON && this.#o.reserved.has(u.name)) throw new Error(`the shared user '${u.name}' is this node's config file API user: not taken`);
    new PolicyIndex([u]);
    const had = this.stored(u.name);
    if (had && JSON.stringify(had) === JSON.stringify(u)) return;
    await this.#place(u, [u.name]);
  }

  async drop(name: string): Promise<void> {
    if (name !== ANON && this.stored(name)) await this.#place(undefined, [name]);
  }

  #find(name: string): StoredUser {
    const u = this.#o.doc.data.users.find((x) => x.name === name);
    if (!u) throw iamErrors.notFound(name);
    return u;
  }

  #nameFree(name: string): void {
    if (name === ANON || this.#o.reserved.has(name)) throw iamErrors.reserved(name);
    if (!new RegExp(NAME_PATTERN).test(name)) throw iamErrors.invalid('name', 'letters, digits, `_.@+-`, 1 to 64');
    if (this.#o.doc.data.users.some((u) => u.name === name)) throw iamErrors.exists(name);
  }

  /**
   * The users named `names` replaced by `u` (in the first one's place), or removed; saved, and
   * undone when the write fails. By name, not by object: the shared store's watcher may have put
   * the same change in place meanwhile.
   */
  async #place(u: StoredUser | undefined, names: readonly string[]): Promise<void> {
    const touched = new Set(names);
    if (u) touched.add(u.name);
    await this.#o.doc.commit(() => {
      const users = this.#o.doc.data.users;
      const before = users.slice();
      const at = users.findIndex((x) => touched.has(x.name));
      const kept = users.filter((x) => !touched.has(x.name));
      if (u) kept.splice(at < 0 ? kept.length : at, 0, u);
      users.splice(0, users.length, ...kept);
      this.#reindex(touched);
      return () => { users.splice(0, users.length, ...before); this.#reindex(touched); };
    });
    for (const fn of this.#saved) {
      try { fn(); } catch { /* a listener's fault is its own: the change is written */ }
    }
  }

  /** The users with an SRT passphrase of their own, by name (the SRT host keys their connections with it). */
  srtPassphrases(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const u of this.#o.doc.data.users) if (u.auth.srt_passphrase) out[u.name] = u.auth.srt_passphrase;
    return out;
  }

  /** Calls `fn` after every change of the users and of a failed one's undo (`saved`: once a change is written); returns the unsubscribe. */
  onChange(fn: () => void, saved = false): () => void {
    const set = saved ? this.#saved : this.#listeners;
    set.add(fn);
    return () => { set.delete(fn); };
  }

  #reindex(names: ReadonlySet<string>): void {
    this.#byName = undefined;
    for (const name of names) {
      const u = this.stored(name);
      if (u) this.index.set(u);
      else this.index.delete(name);
    }
    for (const fn of this.#listeners) {
      try { fn(); } catch { /* a listener's fault is its own */ }
    }
  }

  async #replace(old: StoredUser, u: StoredUser): Promise<void> {
    // checked again after the hashing: the user may have gone (by name: the shared store's watcher
    // may have put an equal user in its place meanwhile), or the new name been taken
    if (!this.stored(old.name)) throw iamErrors.notFound(old.name);
    if (u.name !== old.name) this.#nameFree(u.name);
    u.updated_at = now();
    if (u.name !== old.name) [u.former, u.named_at] = [withFormer(old.former, old.name, old.named_at, u.updated_at), u.updated_at];
    await this.#replication?.write({ kind: 'put', record: record(u), ...(u.name !== old.name ? { previousName: old.name } : {}) });
    await this.#place(u, [old.name, u.name]);
  }

  /** The fields of `b` applied to `u` (secrets hashed, "" keeping the stored one); checked first. */
  async #apply(u: StoredUser, b: IamUserUpdate, fresh: boolean): Promise<StoredUser> {
    const login = JSON.stringify([u.name, u.auth.api]);
    if (b.name !== undefined) u.name = b.name;
    if (b.alias !== undefined) u.alias = b.alias;
    if (u.name === ANON && b.auth !== undefined) throw iamErrors.invalid('auth', '$anon has policies only');
    if (b.superuser !== undefined) {
      if (u.name === ANON && b.superuser) throw iamErrors.invalid('superuser', '$anon cannot be a superuser');
      u.superuser = b.superuser;
    }
    if (b.policies !== undefined) {
      if (b.policies.length > this.#o.maxPolicies) throw iamErrors.invalid('policies', `at most ${this.#o.maxPolicies} (iam.max_policies)`);
      u.policies = checkedPolicies(b.policies);
    }
    const api = b.auth?.api;
    if (api?.userpass) {
      const up = u.auth.api.userpass;
      if (api.userpass.enable !== undefined) up.enable = api.userpass.enable;
      if (api.userpass.password) up.hash = await hashPassword(api.userpass.password);
      if (up.enable && up.hash === '') throw iamErrors.invalid('auth.api.userpass.password', 'needed when userpass is enabled');
    }
    if (api?.auth0) {
      const a = u.auth.api.auth0;
      a.enable = api.auth0.enable ?? a.enable;
      a.user = api.auth0.user ?? a.user;
      a.tenant = { ...a.tenant, ...api.auth0.tenant };
    }
    // a new password (even the same one again), a login turned on or off or moved, a new name: earlier tokens end
    if (!fresh && JSON.stringify([u.name, u.auth.api]) !== login) u.tokens_since = Date.now();
    for (const kind of SERVICES) {
      const given = b.auth?.services?.[kind];
      // session secrets sign tokens (HMAC): kept as written, as the SRT passphrase
      if (given) u.auth.services[kind] = keys(given, u.auth.services[kind], `auth.services.${kind}`, fresh, kind === 'session' ? plain : hashKey);
    }
    const pass = b.auth?.services?.srt_passphrase;
    if (pass === null) u.auth.srt_passphrase = '';
    else if (pass) {
      // libsrt counts bytes: a passphrase outside 10-79 of them would be refused there without a word
      const bytes = Buffer.byteLength(pass);
      if (bytes < 10 || bytes > 79) throw iamErrors.invalid('auth.services.srt_passphrase', '10 to 79 bytes (SRT\'s rule)');
      u.auth.srt_passphrase = pass;
    }
    return u;
  }
}

/** Service secrets as written: "" keeps the stored one at that place; others are hashed. */
function keys(given: readonly string[], stored: readonly string[], field: string, fresh: boolean, keep: (k: string) => string): string[] {
  return given.map((k, i) => {
    if (k !== '') return keep(k);
    if (fresh || stored[i] === undefined) throw iamErrors.invalid(`${field}.${i}`, 'an empty secret (write the secret, or "" in the place of a stored one)');
    return stored[i]!;
  });
}

/** A session secret as stored: as written, marked (reads.ts `sessionSecrets`). */
const plain = (k: string) => `plain$${k}`;

/** A stored user as the shared store keeps it. */
const record = (u: StoredUser): IamRecord => u as unknown as IamRecord;

/** A user as answered: every secret "". */
export function view(u: StoredUser): IamUser {
  const blank = (list: readonly string[]) => list.map(() => '');
  return {
    name: u.name, alias: u.alias, superuser: u.superuser,
    auth: {
      api: { userpass: { enable: u.auth.api.userpass.enable, password: '' }, auth0: structuredClone(u.auth.api.auth0) },
      services: { basic: blank(u.auth.services.basic), token: blank(u.auth.services.token), session: blank(u.auth.services.session), srt_passphrase: '' },
    },
    policies: u.policies.map((p) => ({ domain: p.domain, types: [...p.types], resource: p.resource, actions: [...p.actions] })),
  };
}
