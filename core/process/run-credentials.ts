import { hash, randomBytes } from 'node:crypto';
import type { RunCredential, RunCredentials, RunField, RunGrant, RunUse } from '../../sdk/index.ts';

type RunDescriber = (grant: RunGrant) => readonly RunUse[];

/*
 * The run credential registry (`runCredentialsRef`, issue 43.4): one random token per run of a
 * process, minted by the engine before the spawn and revoked once the child exited. Tokens are
 * kept by their SHA-256, so a lookup compares digests, never the secret itself byte by byte.
 */

/** 24 random bytes: 32 characters of base64url. */
const TOKEN_BYTES = 24;
const TOKEN = /^[A-Za-z0-9_-]{32}$/;

// the one-shot hash: no Hash object per lookup (every upload of a child looks its token up)
const digest = (token: string): string => hash('sha256', token, 'base64url');

interface Live {
  processId: string;
  token: string;
  fields: readonly RunField[];
  bound: boolean;
}

export class RunCredentialTable implements RunCredentials {
  readonly #live = new Map<string, Live>();
  readonly #watchers = new Set<() => void>();
  readonly #describers = new Set<RunDescriber>();
  readonly #onError: (err: unknown) => void;

  /** `onError`: a watcher that throws (a bug of its plugin) is reported there, the others are still told. */
  constructor(onError: (err: unknown) => void = () => {}) {
    this.#onError = onError;
  }

  issue(processId: string): RunCredential {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    const key = digest(token);
    const live: Live = { processId, token, fields: [], bound: false };
    this.#live.set(key, live);
    const mine = () => this.#live.get(key) === live;
    return Object.freeze({
      processId,
      token,
      bind: (fields: readonly RunField[]) => {
        if (!mine()) return;
        live.fields = Object.freeze(fields.map((f) => Object.freeze({ section: f.section, text: f.text })));
        live.bound = true;
        this.#changed();
      },
      revoke: () => {
        if (!mine()) return;
        this.#live.delete(key);
        if (live.bound) this.#changed();
      },
    });
  }

  find(token: string): RunGrant | undefined {
    if (typeof token !== 'string' || !TOKEN.test(token)) return undefined;
    const live = this.#live.get(digest(token));
    return live && { processId: live.processId, token: live.token, fields: live.fields };
  }

  live(): RunGrant[] {
    return [...this.#live.values()].filter((l) => l.bound).map((l) => ({ processId: l.processId, token: l.token, fields: l.fields }));
  }

  watch(listener: () => void): () => void {
    const own = () => listener();
    this.#watchers.add(own);
    return () => { this.#watchers.delete(own); };
  }

  describe(describer: RunDescriber): () => void {
    const own: RunDescriber = (g) => describer(g);
    this.#describers.add(own);
    return () => { this.#describers.delete(own); };
  }

  uses(grant: RunGrant): RunUse[] {
    const out: RunUse[] = [];
    for (const d of this.#describers) {
      // a reading that fails names what no policy allows: the check refuses instead of passing it by
      try { out.push(...d(grant)); } catch (err) { this.#onError(err); out.push({ type: 'unreadable', resource: grant.processId, action: 'DESCRIBE' }); }
    }
    return out;
  }

  #changed(): void {
    for (const w of this.#watchers) {
      try { w(); } catch (err) { this.#onError(err); }
    }
  }

  /** How many runs hold a live credential (tests). */
  get size(): number {
    return this.#live.size;
  }
}
