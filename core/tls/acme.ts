import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import acme from 'acme-client';
import type { Logger } from 'pino';
import { writeFileAtomic, type TlsCertificates, type TlsKeyPair } from '../../sdk/index.ts';
import { MAX_TIMER_MS, coversNames, renewAt, retryDelay } from './renewal.ts';

export interface AcmeOptions {
  /** `host.name`: the certificate's names, the first one names the stored file. */
  names: readonly string[];
  email: string;
  /** The CA's ACME directory (`tls.acme_directory`). */
  directoryUrl: string;
  /** `<db.dir>/cert` (reference 1.1). */
  dir: string;
  log: Logger;
}

interface Stored { cert: string; key: string }

/**
 * Certificates from an ACME CA (`tls.auto`), HTTP-01 on the HTTP listener: `keyAuthorization`
 * answers `/.well-known/acme-challenge/<token>`. The pair is stored as one JSON file written
 * atomically (a crash never leaves a key that does not match its certificate) and reused at the
 * next start while it covers `host.name` and is not due; it is renewed when a third of its
 * lifetime is left, and every TLS listener (HTTPS, RTMPS) gets the new one through `onChange`.
 */
export class AcmeCertificates implements TlsCertificates {
  readonly #opts: AcmeOptions;
  readonly #listeners = new Set<(pair: TlsKeyPair) => void>();
  readonly #challenges = new Map<string, string>();
  #pair: TlsKeyPair | undefined;
  #due = 0;
  #failures = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #acme: acme.Client | undefined;
  #accountUrl: string | undefined;

  constructor(opts: AcmeOptions) {
    this.#opts = opts;
    this.#load();
  }

  get #file(): string { return join(this.#opts.dir, `${this.#opts.names[0]}.json`); }

  current(): TlsKeyPair | undefined { return this.#pair; }

  onChange(fn: (pair: TlsKeyPair) => void): () => void {
    this.#listeners.add(fn);
    return () => { this.#listeners.delete(fn); };
  }

  /** The answer to an HTTP-01 challenge of an order in progress. */
  keyAuthorization(token: string): string | undefined { return this.#challenges.get(token); }

  /** Plans the first order or renewal; called once the HTTP listener is up (the CA calls it back). */
  start(): void { this.#plan(this.#due - Date.now()); }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  /** Orders a certificate now, stores and publishes it. */
  async renew(): Promise<void> {
    const { names, email, log } = this.#opts;
    const client = await this.#client();
    const [key, csr] = await acme.crypto.createCsr({ commonName: names[0]!, altNames: [...names] });
    const cert = await client.auto({
      csr, email: email || undefined, termsOfServiceAgreed: true, challengePriority: ['http-01'],
      // the CA checks the challenge itself; a self-check would go to port 80, which may be elsewhere
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => { this.#challenges.set(challenge.token, keyAuthorization); },
      challengeRemoveFn: async (_authz, challenge) => { this.#challenges.delete(challenge.token); },
    });
    await this.#keepAccountUrl(client);
    if (this.#closed) return;
    const stored: Stored = { cert, key: key.toString() };
    await writeFileAtomic(this.#file, JSON.stringify(stored));
    this.#use(stored);
    log.info({ names, until: acme.crypto.readCertificateInfo(cert).notAfter.toISOString() }, 'certificate obtained');
    for (const fn of this.#listeners) fn(this.#pair!);
  }

  #plan(delay: number): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    const wait = Math.max(0, delay);
    this.#timer = setTimeout(() => {
      // a long wait is cut into timers of at most a day: re-check the real due time
      if (this.#due - Date.now() > 1000) return this.#plan(this.#due - Date.now());
      this.renew().then(() => {
        this.#failures = 0;
        this.#plan(this.#due - Date.now());
      }, (err: Error) => {
        this.#failures++;
        const next = retryDelay(this.#failures);
        // the reference goes on without HTTPS until a certificate can be had
        this.#opts.log.warn({ err: err.message, retry_seconds: next / 1000 }, 'cannot obtain a certificate');
        this.#plan(next);
      });
    }, Math.min(wait, MAX_TIMER_MS));
    this.#timer.unref();
  }

  #load(): void {
    try {
      const stored = JSON.parse(readFileSync(this.#file, 'utf8')) as Stored;
      const info = acme.crypto.readCertificateInfo(stored.cert);
      const names = [info.domains.commonName, ...info.domains.altNames];
      if (!coversNames(names, this.#opts.names) || info.notAfter.getTime() <= Date.now()) return;
      this.#use(stored);
    } catch { /* none stored yet, or unreadable: a new one is ordered */ }
  }

  #use(stored: Stored): void {
    const info = acme.crypto.readCertificateInfo(stored.cert);
    this.#pair = { cert: Buffer.from(stored.cert), key: Buffer.from(stored.key) };
    this.#due = renewAt(info.notBefore, info.notAfter);
  }

  /**
   * One ACME client, and its account URL kept beside the key: a known account is not registered
   * again (a CA answers an existing account's registration with an update, which some refuse).
   */
  async #client(): Promise<acme.Client> {
    if (this.#acme) return this.#acme;
    let accountUrl: string | undefined;
    try {
      const saved = JSON.parse(readFileSync(join(this.#opts.dir, 'account.json'), 'utf8')) as { directory?: string; url?: string };
      if (saved.directory === this.#opts.directoryUrl) accountUrl = saved.url;
    } catch { /* no account yet */ }
    this.#acme = new acme.Client({ directoryUrl: this.#opts.directoryUrl, accountKey: await this.#accountKey(), accountUrl });
    return this.#acme;
  }

  async #keepAccountUrl(client: acme.Client): Promise<void> {
    const url = client.getAccountUrl();
    if (url === this.#accountUrl) return;
    await writeFileAtomic(join(this.#opts.dir, 'account.json'), JSON.stringify({ directory: this.#opts.directoryUrl, url }));
    this.#accountUrl = url;
  }

  async #accountKey(): Promise<Buffer> {
    const path = join(this.#opts.dir, 'account.key');
    try {
      return readFileSync(path);
    } catch {
      const key = await acme.crypto.createPrivateKey();
      await writeFileAtomic(path, key);
      return key;
    }
  }
}
