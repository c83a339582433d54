import t from 'tap';
import { fileURLToPath } from 'node:url';
import { startApp, type TestLike } from '../../helpers/app.ts';

const fixture = fileURLToPath(new URL('../fixtures/sections-plugin.ts', import.meta.url));

async function bootError(t: TestLike, config: Record<string, unknown>): Promise<string> {
  try {
    await startApp(t, { config });
  } catch (err) {
    return (err as Error).message;
  }
  return 'started';
}

t.test("a plugin's own rule: 409 on PUT and a boot error, both with the dotted path", async (t) => {
  const app = await startApp(t, { config: { plugins: ['memfs', 'disk-fs', { module: fixture, config: { min: 1, max: 5 } }] } });
  const r = await app.request('PUT', '/api/v3/config', { body: { storage: { memory: { auth: { enable: true, username: '' } } } } });
  t.equal(r.status, 409);
  t.same(r.body, { 'storage.memory.auth.enable': ['username and password must be set when memfs auth is enabled'] }, 'memfs validate, prefixed by its section');
  const enc = await app.request('PUT', '/api/v3/config', { body: { encoder: { access: { input: { block: ['(x'] } } } } });
  t.same(enc.body, { 'encoder.access.input.block': ["'(x' is not a valid regular expression (RE2 syntax: no backreferences or lookaround)"] }, 'the process engine rules');
  // a loaded plugin's own settings stay editable; the list of plugins (which code runs) does not (issue 26)
  const vendor = await app.request('PUT', '/api/v3/config', { body: { plugins: ['memfs', 'disk-fs', { module: fixture, config: { min: 5, max: 1 } }] } });
  t.same(vendor.body, { 'plugins[2].config.min': ['must not be bigger than max'] }, "a vendor plugin's validate, at its entry");
  const unknown = await app.request('PUT', '/api/v3/config', { body: { plugins: ['memfs', 'no-such-plugin'] } });
  t.equal(unknown.status, 400);
  t.match(unknown.body.details[0], /^plugins: can only be set in the config file/, 'another list is refused, whatever it names');
  for (const plugins of [[null], [null, 'memfs'], [1], [[]], [true, { module: 5 }], 'memfs']) {
    const odd = await app.request('PUT', '/api/v3/config', { body: { plugins } });
    t.match([odd.status, odd.body.details?.[0]], [400, /^plugins: can only be set in the config file/], `plugins ${JSON.stringify(plugins)}: 400, not 500`);
  }
  t.equal((await app.request('GET', '/api/v3/config')).body.config.plugins.length, 3, 'the list is as stored');

  t.match(await bootError(t, { plugins: ['memfs'], storage: { memory: { auth: { enable: true, username: '' } } } }),
    /storage\.memory\.auth\.enable: username and password must be set/);
  t.match(await bootError(t, { plugins: [{ module: fixture, config: { min: 5, max: 1 } }] }),
    /plugins\[0\]\.config\.min: must not be bigger than max/, "a vendor plugin's validate runs on its entry settings");
});

t.test('a plugin sees only the sections it declared in reads, frozen', async (t) => {
  const app = await startApp(t, { config: { plugins: [{ module: fixture, config: { min: 1, max: 2 } }] } });
  const r = await app.request('GET', '/api/v3/sections-fixture');
  t.equal(r.status, 200);
  t.equal(r.body.db, (await app.request('GET', '/api/v3/config')).body.config.db.dir);
  t.same(r.body.keys, ['db']);
  t.match(r.body.undeclared, /reads config section 'storage' without declaring it in 'reads'/);
  t.match(r.body.mutated, /read only|read-only|Cannot assign/);
});
