import { readFileSync } from 'node:fs';
import { BootError, type TlsCertificates, type TlsKeyPair } from '../../sdk/index.ts';
import type { ConfigData } from '../config/config-data.ts';

/**
 * The certificate from `tls.cert_file` and `tls.key_file`, read once per app (a config reload
 * builds a new app, so a replaced file is picked up by a reload). Unreadable files fail the boot
 * with the file named, like every other listener problem.
 */
export class FileCertificates implements TlsCertificates {
  readonly #pair: TlsKeyPair | undefined;
  readonly #listeners = new Set<(pair: TlsKeyPair) => void>();

  constructor(tls: ConfigData['tls']) {
    if (!tls.enable || !tls.cert_file || !tls.key_file) return;
    this.#pair = { cert: readPem(tls.cert_file, 'tls.cert_file'), key: readPem(tls.key_file, 'tls.key_file') };
  }

  current(): TlsKeyPair | undefined {
    return this.#pair;
  }

  onChange(fn: (pair: TlsKeyPair) => void): () => void {
    this.#listeners.add(fn);
    return () => { this.#listeners.delete(fn); };
  }

  /** Hands a new pair to every listener (for automatic certificates). */
  protected publish(pair: TlsKeyPair): void {
    for (const fn of this.#listeners) fn(pair);
  }
}

function readPem(path: string, key: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new BootError(`${key}: cannot read ${path}: ${(err as Error).message}`);
  }
}
