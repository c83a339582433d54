import { createServiceRef, type ApiError, type AuthorizeInput } from '../../sdk/index.ts';

/*
 * The iam plugin's contract for other plugins: the auth plugin issues tokens for IAM users (their
 * subject is `iam:<name>`, from iam's login validator) and asks iam about every API request such a
 * token makes. Without the iam plugin such a token opens nothing (auth refuses it), so a service
 * started again with `iam.enable` off never lets a user's token act as the config file's user.
 */

/** The subject of an IAM user's tokens: this, then the user's name. */
export const IAM_SUBJECT = 'iam:';

/** IAM's decisions, as the auth plugin asks them. */
export interface IamAccess {
  /**
   * A protected API request made with the token of subject `iam:<name>`: undefined when its user
   * (still there, with its login on) may, else the refusal (401 for a user gone, 403 otherwise).
   */
  authorizeApi(input: AuthorizeInput, subject: string): ApiError | undefined;
  /**
   * Whether a token of subject `iam:<name>` whose login began at `loginMs` still stands: undefined
   * when its user exists with its login on and its password, login or name has not changed since
   * (a user deleted and made again is another user); else the 401.
   */
  tokenRefusal(subject: string, loginMs: number): ApiError | undefined;
  /**
   * The same decision for a request the caller did not send as such (GraphQL asks it for a
   * field's REST twin: `GET /api/v3/log` for `log`): `path` without the query, `domain` as
   * `?domain=` would give it.
   */
  mayApi(subject: string, method: string, path: string, domain?: string): ApiError | undefined;
  /**
   * A stream client's key `<user>:<token>` (where the protocol's own token did not match): whether
   * the user has that token among `auth.services.token` and a policy of the protocol's type lets
   * it `action` the stream (its table name, `live/cam`). `reason` says why not (for the log).
   */
  streamKey(key: string, q: { protocol: 'rtmp' | 'srt' | 'webrtc' | 'hls'; stream: string; action: 'PLAY' | 'PUBLISH' }): { allowed: boolean; reason: string };
  /**
   * A Basic credential of a file mount's write that is not the mount's own: whether `username` is
   * a user with `password` among `auth.services.basic` and an `fs` policy lets it `method` the
   * `path` (the mount's, `/memfs/live/x.ts`). Undefined when no such user holds that password.
   */
  basicKey(username: string, password: string, q: { method: string; path: string }): { allowed: boolean; reason: string } | undefined;
  /**
   * Whether the token of subject `iam:<name>` sees an event (the event stream): one about a process
   * it may read, or a stream it may play over some protocol; others (the service's own, files,
   * nodes) are the superusers'.
   */
  seesEvent(subject: string, event: { subject: Readonly<Record<string, string>> }): boolean;
  /**
   * The users with an SRT passphrase of their own, by name: where `srt.passphrase` is set, a
   * connection with such a user's key is encrypted with that passphrase instead.
   */
  srtPassphrases(): Readonly<Record<string, string>>;
  /** Calls `fn` after every change of the users (e.g. to push `srtPassphrases` again); returns the unsubscribe. */
  onUsersChanged(fn: () => void): () => void;
}

/**
 * IAM's access decisions (provided when `iam.enable`).
 *
 * @example
 * deps: { iam: optional(iamAccessRef) }
 */
export const iamAccessRef = createServiceRef<IamAccess>('iam.access');

/**
 * A user in its stored form (secrets hashed) as nodes share it: its name and fields only iam
 * reads. Whoever shares users keeps it as it is.
 */
export interface IamRecord { readonly name: string; readonly [field: string]: unknown }

/** A change the IAM routes made, about to be acknowledged. */
export type IamWrite =
  /** `created`: the name must be new in the shared store; `previousName` when a PUT renamed the user. */
  | { kind: 'put'; record: IamRecord; created?: boolean; previousName?: string }
  | { kind: 'delete'; name: string };

/** What a plugin that shares the users between nodes gives iam (`attach`). */
export interface IamReplication {
  /**
   * Called before a change is acknowledged and before users.json is written: the shared store
   * takes it, or the call throws an ApiError (e.g. 409 when another node made the name first)
   * and nothing changes here.
   */
  write(change: IamWrite): Promise<void>;
}

/**
 * iam's side of sharing the users between nodes (provided when `iam.enable`; used by the cluster
 * plugin). Without an attached replication users.json is the store, as on a single node.
 *
 * @example
 * deps: { iam: optional(iamReplicaRef) },
 * setup(ctx) { ctx.deps.iam?.attach({ write: (c) => store.write(c) }); }
 */
export interface IamReplicaService {
  /** From now on every change of the IAM routes goes through `r.write` first. One at most. */
  attach(r: IamReplication): void;
  /** Every user in its stored form, `$anon` too (to import a node's users.json). */
  records(): IamRecord[];
  /** A user as the shared store has it: added, or put in place of the one of that name. */
  apply(record: IamRecord): Promise<void>;
  /** A user the shared store no longer has (never `$anon`). */
  drop(name: string): Promise<void>;
}

/**
 * IAM's users as they are shared between nodes (provided when `iam.enable`).
 *
 * @example
 * deps: { iam: optional(iamReplicaRef) }
 */
export const iamReplicaRef = createServiceRef<IamReplicaService>('iam.replica');
