import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { AcmeCertificates } from '../../../core/tls/acme.ts';
import { makeChain } from '../../helpers/certs.ts';

t.test('a stored certificate is reused at start while it covers host.name', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'core-acme-store-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const chain = makeChain(dir, 'stored'); // covers localhost, valid two days
  const certDir = join(dir, 'cert');
  mkdirSync(certDir);
  const stored = { cert: readFileSync(chain.certFile, 'utf8'), key: readFileSync(chain.keyFile, 'utf8') };
  writeFileSync(join(certDir, 'localhost.json'), JSON.stringify(stored));
  const opts = { email: '', directoryUrl: 'https://127.0.0.1:1/dir', dir: certDir, log: pino({ level: 'silent' }) };

  const same = new AcmeCertificates({ ...opts, names: ['localhost'] });
  t.equal(same.current()?.cert.toString(), stored.cert, 'no new order needed');
  t.equal(same.current()?.key.toString(), stored.key);
  same.close();

  writeFileSync(join(certDir, 'live.example.com.json'), JSON.stringify(stored));
  const other = new AcmeCertificates({ ...opts, names: ['live.example.com'] });
  t.equal(other.current(), undefined, 'a certificate for other names is not used');
  other.close();

  writeFileSync(join(certDir, 'localhost.json'), '{"cert":"torn');
  t.equal(new AcmeCertificates({ ...opts, names: ['localhost'] }).current(), undefined, 'an unreadable file means a new order');
});
