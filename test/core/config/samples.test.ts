import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../helpers/app.ts';
import { deepMerge } from '../../../core/config/schema-walk.ts';
import { stripJsonComments } from '../../../core/config/jsonc.ts';
import { createTestApp } from '../../../testkit/index.ts';
import { fullSample } from '../../../scripts/sample-config.ts';
import { installedIn } from '../../../examples/http-ts-ingest/test/helpers.ts';

const DIR = fileURLToPath(new URL('../../../sample-config/', import.meta.url));
const read = async (file: string) => JSON.parse(stripJsonComments(await readFile(join(DIR, file), 'utf8'))) as Record<string, unknown>;
/** The sample with its folders in the test's temp folder and no fixed port. */
const local = (sample: Record<string, unknown>, dir: string) =>
  deepMerge(sample, { address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } } });

t.test('sample-config/full.jsonc is generated from the schema and current', async (t) => {
  t.equal(await readFile(join(DIR, 'full.jsonc'), 'utf8'), fullSample(), 'regenerate with: node scripts/sample-config.ts');
});

for (const file of ['full.jsonc', 'minimal.json', 'slim.json', 'vendor.json']) {
  t.test(`sample-config/${file} boots (in-process)`, async (t) => {
    // packages are found from the config file's folder: the vendor sample gets the example
    // installed next to it (as `npm install http-ts-ingest` there would)
    const base = file === 'vendor.json' ? await installedIn(t.testdir()) : DIR;
    const kit = await createTestApp({ t, config: local(await read(file), t.testdirName), baseDir: base });
    t.equal((await kit.request('GET', '/ping')).text, 'pong');
    const about = await kit.request('GET', '/api');
    t.equal(about.status, 200);
    t.equal(about.body.app, 'datarhei-core');
    const loaded = kit.app.kernel.plugins;
    if (file === 'full.jsonc') t.ok(['auth', 'memfs', 'rtmp', 'srt', 'sessions'].every((p) => loaded.includes(p)), 'every built-in');
    if (file === 'minimal.json') t.same(loaded, ['process', 'disk-fs', 'memfs'], 'the process engine is always mounted, first');
    if (file === 'slim.json') t.notOk(loaded.includes('rtmp') || loaded.includes('srt'));
    if (file === 'vendor.json') {
      t.ok(loaded.includes('http-ts-ingest'));
      t.equal((await kit.request('PUT', '/ingest/ts/x', { raw: 'x' })).status, 401, 'its own settings apply (token)');
    }
  });
}

t.test('sample-config/tls.json serves HTTPS with a self-signed certificate', async (t) => {
  const dir = t.testdir({ cert: {} });
  const cert = join(dir, 'cert', 'cert.pem');
  const key = join(dir, 'cert', 'key.pem');
  // the command the sample's README gives
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });
  const sample = await read('tls.json');
  const app = await startApp(t, { config: deepMerge(local(sample, dir), { tls: { address: '127.0.0.1:0', cert_file: cert, key_file: key } }) });
  const ca = await readFile(cert);
  const body = await new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', servername: 'localhost', port: app.service.httpsPort, path: '/ping', ca, agent: false }, (res) => {
      let b = '';
      res.on('data', (d: Buffer) => { b += d.toString(); });
      res.on('end', () => resolve(b));
    });
    req.on('error', reject);
    req.end();
  });
  t.equal(body, 'pong', 'the certificate is trusted and served');
});
