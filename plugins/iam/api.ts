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
}

/**
 * IAM's access decisions (provided when `iam.enable`).
 *
 * @example
 * deps: { iam: optional(iamAccessRef) }
 */
export const iamAccessRef = createServiceRef<IamAccess>('iam.access');
