import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestChain {
  /** The CA certificate a client trusts (PEM). */
  ca: Buffer;
  /** Leaf + CA certificate (the chain the server sends) and the leaf key, as files. */
  certFile: string;
  keyFile: string;
}

/**
 * A test CA and a leaf for `localhost`/127.0.0.1 signed by it (openssl, EC keys so it is fast),
 * written into `dir` with the prefix `name`. A client that trusts only `ca` checks the real chain.
 */
export function makeChain(dir: string, name = 'server', ca?: { cert: string; key: string }): TestChain & { caFiles: { cert: string; key: string } } {
  const p = (f: string) => join(dir, `${name}-${f}`);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let caFiles = ca;
  if (!caFiles) {
    caFiles = { cert: p('ca.pem'), key: p('ca.key') };
    ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', caFiles.key,
      '-out', caFiles.cert, '-days', '2', '-subj', '/CN=core test CA', '-addext', 'basicConstraints=critical,CA:TRUE',
      '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  }
  const key = p('leaf.key');
  ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', p('leaf.csr'), '-subj', `/CN=${name}`);
  writeFileSync(p('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  ssl('x509', '-req', '-in', p('leaf.csr'), '-CA', caFiles.cert, '-CAkey', caFiles.key, '-CAcreateserial', '-days', '2',
    '-out', p('leaf.pem'), '-extfile', p('ext.cnf'));
  const certFile = p('chain.pem');
  writeFileSync(certFile, Buffer.concat([readFileSync(p('leaf.pem')), readFileSync(caFiles.cert)]));
  return { ca: readFileSync(caFiles.cert), certFile, keyFile: key, caFiles };
}

/**
 * A test CA, a first leaf (CN `first`) in the files a config's `tls` names, and a way to put a
 * renewed leaf there.
 */
export interface TlsFiles {
  /** The temporary folder (removed in teardown), for more chains. */
  dir: string;
  ca: Buffer;
  certFile: string;
  keyFile: string;
  /** A new leaf from the same CA into the config's files; returns its serial as node prints it. */
  renew(name: string): { serial: string; cert: Buffer; key: Buffer };
}

export function tlsFiles(t: { teardown(fn: () => void): void }): TlsFiles {
  const dir = mkdtempSync(join(tmpdir(), 'core-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = makeChain(dir, 'first');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  copyFileSync(first.certFile, certFile);
  copyFileSync(first.keyFile, keyFile);
  return {
    dir, ca: first.ca, certFile, keyFile,
    renew(name) {
      const next = makeChain(dir, name, first.caFiles);
      copyFileSync(next.certFile, certFile);
      copyFileSync(next.keyFile, keyFile);
      const cert = readFileSync(next.certFile);
      // the leaf (first of the chain), upper-case hex as getPeerCertificate gives it
      return { serial: new X509Certificate(cert).serialNumber.toUpperCase(), cert, key: readFileSync(next.keyFile) };
    },
  };
}
