import { execFileSync } from 'node:child_process';
import { writeFileSync, readFileSync } from 'node:fs';
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
