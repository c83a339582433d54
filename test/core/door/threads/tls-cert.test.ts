import t from 'tap';
import { readFile, writeFile } from 'node:fs/promises';
import { startApp, type TestApp } from '../../../helpers/app.ts';
import { tlsCertificatesRef, type TlsKeyPair } from '../../../../sdk/index.ts';
import { tlsFiles, type TlsFiles } from '../../../helpers/certs.ts';
import { freshTls, overEveryThread, tlsThreadsConfig } from './tls-helpers.ts';

/*
 * The certificate on the threads' HTTPS listeners follows main's: a reload with new files and a
 * renewal (what ACME publishes through `onChange`) reach every thread without restarting it; and
 * turning threads on or off keeps HTTPS on its port (main binds again with or without reusePort).
 */

const body = Buffer.from('certificate test '.repeat(100));

/** Until a round of fresh HTTPS reads all show `serial` and every thread answered some of them. */
async function everyListenerShows(app: TestApp, files: TlsFiles, serial: string, what: string): Promise<string[]> {
  let seen = new Set<string>();
  await overEveryThread(app, 'served', async () => {
    seen = new Set();
    for (let k = 0; k < 12; k++) {
      const r = await freshTls(app.service.httpsPort, '/memfs/c.ts', files.ca);
      seen.add(r.status === 200 && r.body.equals(body) ? r.serial : `status ${r.status}`);
    }
    // a round with an older certificate (a thread not yet told) does not count
    if (seen.size !== 1 || !seen.has(serial)) throw new Error(`served: ${[...seen].join(', ')}`);
  }, what);
  return [...seen];
}

t.test('a new certificate reaches every thread without a restart: by a reload and by a renewal', async (t) => {
  const files = tlsFiles(t);
  const app = await startApp(t, { config: tlsThreadsConfig(2, files) });
  t.equal((await freshTls(app.service.httpsPort, '/memfs/c.ts', files.ca, { method: 'PUT', body })).status, 201);
  const port = app.service.httpsPort;

  // new files, picked up by a config reload (the threads stay; main sends them the certificate)
  const second = files.renew('second');
  await app.service.reload();
  t.equal(app.service.httpsPort, port, 'the HTTPS port is kept');
  t.same(await everyListenerShows(app, files, second.serial, 'the reloaded certificate on every listener'), [second.serial]);

  // a renewal (ACME publishes it through onChange; the file provider's publish is the same path)
  const third = files.renew('third');
  const certs = app.service.app.kernel.services.resolve(tlsCertificatesRef) as unknown as { publish(pair: TlsKeyPair): void };
  certs.publish({ cert: third.cert, key: third.key });
  t.same(await everyListenerShows(app, files, third.serial, 'the renewed certificate on every listener'), [third.serial]);
  t.same(app.service.threads.generations(), [1, 1], 'no thread was restarted');
});

t.test('turning threads on and off by a reload keeps HTTPS on its port', async (t) => {
  const files = tlsFiles(t);
  const app = await startApp(t, { config: tlsThreadsConfig(0, files) });
  const port = app.service.httpsPort;
  t.equal((await freshTls(port, '/memfs/c.ts', files.ca, { method: 'PUT', body })).status, 201);
  const setThreads = async (n: number) => {
    const stored = JSON.parse(await readFile(app.configPath, 'utf8'));
    stored.http = { threads: n };
    await writeFile(app.configPath, JSON.stringify(stored));
    await app.service.reload();
    t.equal(app.service.httpsPort, port, `threads ${n}: the HTTPS port is kept`);
  };
  await setThreads(2);
  let wrong = 0;
  await overEveryThread(app, 'served', async () => {
    for (let k = 0; k < 12; k++) if (!(await freshTls(port, '/memfs/c.ts', files.ca)).body.equals(body)) wrong++;
  }, 'both new threads answering HTTPS');
  await setThreads(0);
  t.same(await app.service.threads.stats(), []);
  for (let k = 0; k < 6; k++) if (!(await freshTls(port, '/memfs/c.ts', files.ca)).body.equals(body)) wrong++;
  t.equal(wrong, 0, 'every read got its bytes');
});
