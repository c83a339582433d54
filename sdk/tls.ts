import { createServiceRef } from './refs.ts';

/** A certificate chain and its key, PEM. */
export interface TlsKeyPair {
  cert: Buffer;
  key: Buffer;
}

/**
 * The service's TLS certificate (provided by the core from `tls.cert_file`/`tls.key_file`, or
 * obtained automatically with `tls.auto`). Every TLS listener of a plugin (RTMPS, a vendor's) uses
 * it, so one certificate serves every protocol and a renewal reaches all of them.
 *
 * @example
 * deps: { tls: tlsCertificatesRef },
 * setup(ctx) {
 *   const pair = ctx.deps.tls.current();
 *   if (!pair) throw new BootError('rtmp.enable_tls needs a certificate (tls.cert_file, tls.key_file or tls.auto)');
 *   const server = createTlsServer({ ...pair });
 *   ctx.onClose(ctx.deps.tls.onChange((next) => server.setSecureContext({ ...next })));
 * }
 */
export interface TlsCertificates {
  /** The certificate in use now; undefined when TLS is off or none is available yet. */
  current(): TlsKeyPair | undefined;
  /** Called with the new pair after a renewal or reload; returns the unsubscribe function. */
  onChange(fn: (pair: TlsKeyPair) => void): () => void;
}

/**
 * The TLS certificate service (provided by the core).
 *
 * @example
 * deps: { tls: tlsCertificatesRef }
 */
export const tlsCertificatesRef = createServiceRef<TlsCertificates>('tls.certificates');
