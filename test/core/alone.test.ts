import t from 'tap';
import { createTestApp } from '@media-core/testkit';
import { KERNEL_BUILD } from '@media-core/core/config/build';

// the core runs without any plugin: a build of none (issue 45.3) has the kernel's sections only
t.test('the core alone: the kernel and the process engine, no built-in, the kernel\'s config', async (t) => {
  const kit = await createTestApp({ t, build: KERNEL_BUILD });
  const res = await kit.request('GET', '/api/v3/config');
  t.equal(res.status, 200);
  const config = (res.body as { config: Record<string, unknown> }).config;
  t.ok(config.api && config.encoder && config.storage, 'the kernel\'s sections');
  t.notOk('rtmp' in config || 'sessions' in config, 'no plugin\'s section');
  t.notOk('memory' in (config.storage as object), 'no memfs section under storage');
  t.equal((await kit.request('GET', '/api/v3/process')).status, 200, 'the process engine is the core\'s');
});

t.test('the core alone knows no built-in by name', async (t) => {
  await t.rejects(createTestApp({ t, build: KERNEL_BUILD, plugins: ['memfs'] }), { code: 'PLUGIN_NOT_FOUND' });
});
