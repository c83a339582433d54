import t from 'tap';
import { existsSync } from 'node:fs';
import { createTestApp, override } from '../../testkit/index.ts';
import { createServiceRef, definePlugin, filesystemsRef, PUBLIC, processesRef, type ProcessesService } from '../../sdk/index.ts';

const clockRef = createServiceRef<{ now(): number }>('test.clock');
const greeterRef = createServiceRef<{ greet(n: string): string }>('test.kit-greeter');

const greeter = definePlugin({
  name: 'kit-greeter',
  provides: [greeterRef],
  setup(ctx) { ctx.provide(greeterRef, { greet: (n) => `hello ${n}` }); },
});
const clockUser = definePlugin({
  name: 'kit-clock-user',
  configSchema: undefined,
  deps: { clock: clockRef, greeter: greeterRef },
  setup(ctx) {
    ctx.http.get('/kit/now', { config: PUBLIC }, async () => ({ now: ctx.deps.clock.now(), hi: ctx.deps.greeter.greet('kit') }));
  },
});

t.test('plugins as definitions, a service stand-in, inject without a port', async (t) => {
  const kit = await createTestApp({ t, plugins: [clockUser, greeter], overrides: [override(clockRef, { now: () => 42 })] });
  const res = await kit.request('GET', '/kit/now');
  t.same([res.status, res.body], [200, { now: 42, hi: 'hello kit' }]);
  t.equal(res.headers.get('content-type')?.startsWith('application/json'), true);
  t.equal((await kit.inject('/ping')).payload, 'pong');
  t.notOk(kit.app.http.server.listening, 'never listens');
  t.same(kit.app.kernel.plugins, ['process', 'kit-greeter', 'kit-clock-user'], 'only the chosen plugins, in dependency order');
  t.equal(kit.services.get(clockRef).now(), 42);
});

t.test('an override wins over the plugin that provides the same service, even the process engine', async (t) => {
  const fake = { list: async () => [] } as unknown as ProcessesService;
  const kit = await createTestApp({ t, plugins: [clockUser, greeter], overrides: [override(clockRef, { now: () => 1 }), override(greeterRef, { greet: () => 'stand-in' }), override(processesRef, fake)] });
  t.equal((await kit.request('GET', '/kit/now')).body.hi, 'stand-in');
  t.equal(kit.services.get(processesRef), fake);
});

t.test('built-ins by name with their config; close removes the temp folder', async (t) => {
  const kit = await createTestApp({ plugins: ['memfs'], config: { storage: { memory: { auth: { enable: false } } } } });
  t.equal((await kit.request('PUT', '/memfs/a.txt', { raw: 'hi' })).status, 201);
  t.equal((await kit.request('GET', '/memfs/a.txt')).text, 'hi');
  t.ok(kit.services.get(filesystemsRef).some((f) => f.name === 'mem'));
  t.ok(existsSync(kit.dir));
  await kit.close();
  await kit.close();
  t.notOk(existsSync(kit.dir), 'closed twice, removed once');
});

t.test('a boot error is thrown and leaves nothing behind', async (t) => {
  await t.rejects(createTestApp({ plugins: [clockUser] }), /needs service 'test.clock'/);
});

t.test('listen() binds loopback on a free port for end-to-end tests', async (t) => {
  let port = 0;
  const onListen = definePlugin({ name: 'kit-listen', setup(ctx) { ctx.onListen((p) => { port = p; }); } });
  const kit = await createTestApp({ t, plugins: [onListen] });
  t.equal(port, 0, 'no onListen before');
  const url = await kit.listen();
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.equal(await (await fetch(`${url}/ping`)).text(), 'pong');
  t.equal(`http://127.0.0.1:${port}`, url, 'onListen got the real port');
});
