import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { uiLoad as load, uiSave as save } from '../../helpers/restreamer-ui.ts';

/*
 * restreamer-ui's Settings page and S3 (issue 32). Read from its source (datarhei/restreamer-ui,
 * src/views/Settings.js at 8a45e4c): it has no S3 view (its Storage tab shows in-memory, disk and
 * disk cache); it loads `GET /api/v3/config`, turns some fields into form text, and on save turns
 * them back and sends the WHOLE config object with `PUT /api/v3/config` (the page's steps, as data:
 * test/helpers/restreamer-ui.ts). So what the service must do for it is: give a config the page can
 * load with `storage.s3` in it, and keep every S3 entry (secrets included) through the page's save.
 */

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
