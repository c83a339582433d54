import { createHash, randomBytes } from 'node:crypto';
import type { RunCredential, RunCredentials, RunField, RunGrant } from '../../sdk/index.ts';

/*
 * The run credential registry (`runCredentialsRef`, issue 43.4): one random token per run of a
 * process, minted by the engine before the spawn and revoked once the child exited. Tokens are
 * kept by their SHA-256, so a lookup compares digests, never the secret itself byte by byte.
 */

/** 24 random bytes: 32 characters of base64url. */
const TOKEN_BYTES = 24;
const TOKEN = /^[A-Za-z0-9_-]{32}$/;

const digest = (token: string): string => createHash('sha256').update(token, 'utf8').digest('base64url');

interface Live {
  processId: string;
  token: string;
  fields: readonly RunField[];
}

export class RunCredentialTable implements RunCredentials {
  readonly #live = new Map<string, Live>();

  issue(processId: string): RunCredential {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    const key = digest(token);
    const live: Live = { processId, token, fields: [] };
    this.#live.set(key, live);
    const mine = () => this.#live.get(key) === live;
    return Object.freeze({
      processId,
      token,
      bind: (fields: readonly RunField[]) => {
        if (mine()) live.fields = Object.freeze(fields.map((f) => Object.freeze({ section: f.section, text: f.text })));
      },
      revoke: () => {
        if (mine()) this.#live.delete(key);
      },
    });
  }

  find(token: string): RunGrant | undefined {
    if (typeof token !== 'string' || !TOKEN.test(token)) return undefined;
    const live = this.#live.get(digest(token));
    return live && { processId: live.processId, token: live.token, fields: live.fields };
  }

  /** How many runs hold a live credential (tests). */
  get size(): number {
    return this.#live.size;
  }
}
