import '../../../app/install.ts'; // this service's built-ins, installed into the core
import t from 'tap';
import { parseS3Url } from '../../../core/config/env.ts';
import { cleanEnv, startApp } from '../../helpers/app.ts';
import { s3Unavailable, startS3 } from '../../helpers/s3.ts';
import { placeholdersRef, type PlaceholderRegistry } from '../../../sdk/index.ts';

t.test('CORE_STORAGE_S3 URLs (reference 6.2)', async (t) => {
  t.same(parseS3Url('https://KEY:SE%2FCRET@eu-west-1.s3.example.com:9000/media?name=cloud&mount=/cloud&username=u&password=p'), {
    name: 'cloud', mountpoint: '/cloud', auth: { enable: true, username: 'u', password: 'p' }, endpoint: 's3.example.com:9000',
    access_key_id: 'KEY', secret_access_key: 'SE/CRET', bucket: 'media', region: 'eu-west-1', use_ssl: true,
  });
  const plain = parseS3Url('http://k:s@us-east-1.localhost/b?name=x&mount=/x') as { use_ssl: boolean; auth: { enable: boolean }; endpoint: string };
  t.equal(plain.use_ssl, false);
  t.equal(plain.auth.enable, false, 'no username/password: auth off');
  t.equal(plain.endpoint, 'localhost');
  t.throws(() => parseS3Url('ftp://a@b/c'));
});

t.test('PUT /api/v3/config: the rules of storage.s3 name the field', async (t) => {
  const app = await startApp(t, { config: { plugins: ['auth', 'disk-fs', 'memfs', 's3-fs'] } });
  const base = (await app.request('GET', '/api/v3/config')).body.config;
  const entry = (o: Record<string, unknown>) => ({
    name: 'ok', mountpoint: '/ok', auth: { enable: false, username: '', password: '' }, endpoint: '127.0.0.1:1',
    access_key_id: 'k', secret_access_key: 's', bucket: 'b', region: '', use_ssl: false, ...o,
  });
  const put = (s3: unknown[]) => app.request('PUT', '/api/v3/config', { body: { ...base, storage: { ...base.storage, s3 } } });
  const cases: Array<[unknown[], string]> = [
    [[entry({ name: 'bad name' })], 'storage.s3.0.name'],
    [[entry({ name: 'disk' })], 'storage.s3.0.name'],
    [[entry({ name: '' })], 'storage.s3.0.name'],
    [[entry({}), entry({ mountpoint: '/other' })], 'storage.s3.1.name'],
    [[entry({ mountpoint: '' })], 'storage.s3.0.mountpoint'],
    [[entry({ auth: { enable: true, username: '', password: '' } })], 'storage.s3.0.auth.enable'],
  ];
  for (const [s3, key] of cases) {
    const r = await put(s3);
    t.equal(r.status, 409, `refused like every rule of the reference (6.5): ${JSON.stringify(r.body)}`);
    t.ok(r.body[key], `names ${key}: ${JSON.stringify(r.body)}`);
  }
  const typed = await put([{ name: 'x' }]);
  t.equal(typed.status, 400, 'an entry missing keys is 400');
  t.match(typed.body.details.join(' '), /storage\.s3\.0\.bucket/, 'naming them');
  t.equal((await put([entry({})])).status, 200, 'a valid entry is stored');
  const stored = (await app.request('GET', '/api/v3/config')).body.config.storage.s3;
  t.equal(stored[0].name, 'ok', 'and read back (restreamer-ui reads storage.s3[])');
});

t.test('CORE_STORAGE_S3 makes a working filesystem and {fs:<name>}', { skip: s3Unavailable() }, async (t) => {
  const s3 = await startS3(t);
  const [host, port] = s3.endpoint.split(':');
  const url = `${s3.useSsl ? 'https' : 'http'}://${s3.accessKey}:${s3.secret}@${s3.region}.${host === '127.0.0.1' ? 'localhost' : host}:${port}/${s3.bucket}?name=envfs&mount=/envfs&username=w&password=pw`;
  const app = await startApp(t, { config: { plugins: ['auth', 'disk-fs', 'memfs', 's3-fs'] }, env: cleanEnv({ CORE_STORAGE_S3: url }) });
  const r = await app.request('PUT', '/api/v3/fs/envfs/hello.txt', { raw: 'hi' });
  t.equal(r.status, 201, r.text);
  t.equal((await app.request('GET', '/envfs/hello.txt')).text, 'hi');
  const ph = app.service.app.kernel.services.resolve(placeholdersRef) as PlaceholderRegistry;
  t.match(ph.get('fs:envfs')?.value('output'), /^http:\/\/127\.0\.0\.1:\d+\/envfs$/, 'no credential in a command that does not run');
  t.match(ph.get('fs:envfs')?.value('output', { processId: 'p', token: 'T'.repeat(32) }), new RegExp(`^http://process:p:${'T'.repeat(32)}@127\\.0\\.0\\.1:\\d+/envfs$`), 'a run\'s, never the mount\'s password');
});
