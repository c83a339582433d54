import type { BasicCredentials } from './credentials.ts';
import type { PlaceholderSection } from './placeholders.ts';
import { createServiceRef } from './refs.ts';

/*
 * Run credentials (issue 43.4): a child never gets a configured secret. The process engine mints
 * a random token for each run of a process (at its spawn, `issue`), hands it to the placeholders'
 * value functions (`PlaceholderRun`), binds it to the resolved command (`bind`) and revokes it when
 * the child exited. The service's own listeners (the file door, RTMP, SRT) accept it in place of
 * their configured credential, only for what that command names next to it (its own output paths,
 * its own stream names) and only while the run lives: reading it from `/proc` gains nothing else.
 */

/** The run a placeholder is resolved for (the engine resolves with one only for a child it starts). */
export interface PlaceholderRun {
  /** The process's id. */
  readonly processId: string;
  /** The run's token: 32 characters of base64url (24 random bytes). */
  readonly token: string;
}

/** One field of a run's resolved command (an address or an option), with its section. */
export interface RunField {
  readonly section: PlaceholderSection;
  readonly text: string;
}

/** A live run as a listener sees it when its child presents the token. */
export interface RunGrant {
  readonly processId: string;
  readonly token: string;
  /**
   * The fields of its resolved command, in order: among them what its placeholders pointed at the
   * service with the token (`http://process:<id>:<token>@host:port/memfs/x.m3u8`,
   * `rtmp://host:port/x?token=<token>`). A listener allows what its own URLs among these name
   * (and the file names the options next to them give), nothing else.
   */
  readonly fields: readonly RunField[];
}

/**
 * One thing a run's command names at one of the service's listeners, as an access policy sees it
 * (an IAM user's process may name only what its user may do: `httpHooksRef.processUse`).
 */
export interface RunUse {
  /** The policy type: `fs`, `rtmp`, `srt`, a vendor's. */
  readonly type: string;
  /** What it names: a mount path (`/memfs/a/x.m3u8`), a stream name without its leading `/` (`live/cam`). */
  readonly resource: string;
  /** What the run does there: `GET` or `PUT` of a file, `PLAY` or `PUBLISH` of a stream. */
  readonly action: string;
}

/** The credential of one run, as the process engine holds it. */
export interface RunCredential extends PlaceholderRun {
  /** What the run may reach: the fields of its resolved command. */
  bind(fields: readonly RunField[]): void;
  /** Ends it: `find` no longer knows the token. Idempotent. */
  revoke(): void;
}

/**
 * The registry of run credentials (provided by the core).
 *
 * @example
 * deps: { runs: runCredentialsRef },
 * // a listener: a token given by a client
 * const grant = ctx.deps.runs.find(token);
 * if (grant && grant.fields.some((f) => f.section === 'output' && f.text.includes(`/${name}?token=${token}`))) accept();
 */
export interface RunCredentials {
  /** Mints the credential of a new run of `processId` (the process engine, before each spawn). */
  issue(processId: string): RunCredential;
  /** The live run `token` belongs to; undefined for any other string, an ended run's included. */
  find(token: string): RunGrant | undefined;
  /**
   * Every live run that is bound. For a listener that must know them before a child connects (a
   * native handshake answered synchronously); it follows them with `watch`.
   */
  live(): RunGrant[];
  /** Calls `listener` after a run was bound or revoked; returns the function that stops it. */
  watch(listener: () => void): () => void;
  /**
   * A listener's reading of what runs name at it (RTMP's stream names, SRT's streamids: the same
   * reading it grants a run's token by); returns the function that removes it. The process API
   * asks every reading at a create or update.
   */
  describe(describer: (grant: RunGrant) => readonly RunUse[]): () => void;
  /** What `grant` names at every listener that described itself (a describer that throws names an `unreadable` use, which no policy allows). */
  uses(grant: RunGrant): RunUse[];
}

/**
 * The run credential registry (provided by the core).
 *
 * @example
 * deps: { runs: runCredentialsRef }
 */
export const runCredentialsRef = createServiceRef<RunCredentials>('core.run-credentials');

/**
 * The user name of a run's Basic credential; the password is `<process id>:<token>`.
 *
 * @example
 * if (given.username === RUN_USER) checkRun(given.password);
 */
export const RUN_USER = 'process';

/**
 * The userinfo of a URL that carries a run's Basic credential, `process:<id>:<token>@`
 * (the id URL-encoded; ffmpeg decodes it before it sends the credential).
 *
 * @example
 * value: (section, run) => `http://${run ? runUserinfo(run) : ''}${host}:${port}/memfs`
 */
export function runUserinfo(run: PlaceholderRun): string {
  return `${RUN_USER}:${encodeURIComponent(run.processId)}:${run.token}@`;
}

/**
 * The process id and token of a Basic credential made by `runUserinfo` (the user is `process`, the
 * password `<id>:<token>`; the token holds no colon), else undefined.
 *
 * @example
 * const given = parseBasicAuthorization(req.headers.authorization);
 * const cred = typeof given === 'string' ? undefined : parseRunBasic(given);
 * const grant = cred && runs.find(cred.token);
 * if (grant && grant.processId === cred.processId) allowIfNamed(grant);
 */
export function parseRunBasic(given: BasicCredentials): { processId: string; token: string } | undefined {
  if (given.username !== RUN_USER) return undefined;
  const cut = given.password.lastIndexOf(':');
  if (cut < 0) return undefined;
  return { processId: given.password.slice(0, cut), token: given.password.slice(cut + 1) };
}

/**
 * `read` of a run's grant, computed once per run: a run's fields never change after its spawn, so
 * what a listener reads from them (the streams or paths they name) is kept with them and dropped
 * with them.
 *
 * @example
 * export const runPaths = perRun((grant) => grant.fields.filter((f) => f.text.includes(grant.token)).map((f) => f.text));
 */
export function perRun<T>(read: (grant: RunGrant) => T): (grant: RunGrant) => T {
  const kept = new WeakMap<object, T>();
  return (grant) => {
    if (kept.has(grant.fields)) return kept.get(grant.fields)!;
    const value = read(grant);
    kept.set(grant.fields, value);
    return value;
  };
}
