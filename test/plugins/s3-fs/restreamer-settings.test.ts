import t from 'tap';
import { startApp } from '../../helpers/app.ts';

/*
 * restreamer-ui's Settings page and S3 (issue 32). Read from its source (datarhei/restreamer-ui,
 * src/views/Settings.js at 8a45e4c): it has no S3 view (its Storage tab shows in-memory, disk and
 * disk cache); it loads `GET /api/v3/config`, turns some fields into form text, and on save turns
 * them back and sends the WHOLE config object with `PUT /api/v3/config`. So what the service must do
 * for it is: give a config the page can load with `storage.s3` in it, and keep every S3 entry
 * (secrets included) through the page's save. These are the page's steps, as data, on our answer.
 */

type Config = Record<string, any>;
const lines = (v: string[]) => v.join('\n');
const list = (v: string, sep: string) => v.split(sep).map((s) => s.trim()).filter((s) => s.length > 0);
const port = (address: string) => address.split(':').join('');

/** The page's load: arrays to text, addresses to ports. */
function load(c: Config): Config {
  const x = structuredClone(c);
  x.host.name = x.host.name.join(', ');
  x.storage.cors.allow_all = x.storage.cors.origins.length === 1 && x.storage.cors.origins[0] === '*';
  x.storage.cors.origins = lines(x.storage.cors.origins);
  x.storage.disk.cache.types.allow = lines(x.storage.disk.cache.types.allow);
  x.storage.disk.cache.types.block = lines(x.storage.disk.cache.types.block);
  x.sessions.ip_ignorelist = lines(x.sessions.ip_ignorelist);
  if (x.tls.enable === false) x.tls.auto = false;
  for (const k of ['address', 'tls.address', 'rtmp.address', 'rtmp.address_tls', 'srt.address']) set(x, k, port(get(x, k)));
  return x;
}

/** The page's save: text back to arrays, ports back to addresses; the whole object is PUT. */
function save(x: Config): Config {
  const c = structuredClone(x);
  c.host.name = list(c.host.name, ',');
  c.storage.cors.origins = c.storage.cors.allow_all ? ['*'] : list(c.storage.cors.origins, '\n');
  delete c.storage.cors.allow_all;
  c.storage.disk.cache.types.allow = list(c.storage.disk.cache.types.allow, '\n');
  c.storage.disk.cache.types.block = list(c.storage.disk.cache.types.block, '\n');
  c.sessions.ip_ignorelist = list(c.sessions.ip_ignorelist, '\n');
  for (const k of ['address', 'tls.address', 'rtmp.address', 'rtmp.address_tls', 'srt.address']) set(c, k, `:${get(c, k)}`);
  if (!c.rtmp.app.startsWith('/')) c.rtmp.app = `/${c.rtmp.app}`;
  c.tls.enable = c.tls.auto === true;
  return c;
}

function get(o: Config, path: string): any {
  return path.split('.').reduce((v, k) => v[k], o);
}
function set(o: Config, path: string, value: unknown): void {
  const keys = path.split('.');
  const last = keys.pop()!;
  keys.reduce((v, k) => v[k], o)[last] = value;
}

t.test('restreamer-ui\'s Settings page loads the config with storage.s3 and its save keeps every S3 entry', async (t) => {
  // the page writes ':' + port back: an address written as a port only, as restreamer-ui expects
  const app = await startApp(t, { config: { address: ':0', plugins: ['auth', 'disk-fs', 'memfs', 's3-fs', 'rtmp', 'srt'] } });
  const s3 = [{
    name: 'cloud', mountpoint: '/cloud', auth: { enable: true, username: 'viewer', password: 'view-secret' }, endpoint: '127.0.0.1:1',
    access_key_id: 'AKIDEXAMPLE', secret_access_key: 'wJalrXUtnFEMI/K7MDENG', bucket: 'media', region: 'eu-1', use_ssl: false,
  }];
  const first = (await app.request('GET', '/api/v3/config')).body.config;
  t.equal((await app.request('PUT', '/api/v3/config', { body: { ...first, storage: { ...first.storage, s3 } } })).status, 200, 'an S3 entry stored');

  const shown = (await app.request('GET', '/api/v3/config')).body;
  t.same(shown.config.storage.s3, s3, 'GET gives the entry whole, as the reference does');
  const form = load(shown.config);
  t.equal(typeof form.host.name, 'string', 'the page\'s load steps run on our config');
  const put = await app.request('PUT', '/api/v3/config', { body: save(form) });
  t.equal(put.status, 200, `the page's save is accepted (${put.text.slice(0, 300)})`);
  const after = (await app.request('GET', '/api/v3/config')).body.config;
  t.same(after.storage.s3, s3, 'every S3 entry, secrets included, survives the page\'s save');
  t.same(after.storage.disk.cache.types, shown.config.storage.disk.cache.types, 'and what the page turned into text comes back the same');
});
