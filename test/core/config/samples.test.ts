import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../helpers/app.ts';
import { deepMerge } from '../../../core/config/schema-walk.ts';

const DIR = fileURLToPath(new URL('../../../sample-config/', import.meta.url));

for (const file of ['full.json', 'minimal.json', 'slim.json', 'with-vendor.json']) {
  t.test(`sample-config/${file} boots`, async (t) => {
    const sample = JSON.parse(await readFile(join(DIR, file), 'utf8')) as Record<string, unknown>;
    const plugins = (sample.plugins as unknown[]).map((p) =>
      typeof p === 'object' && p && 'module' in p ? { ...p, module: join(DIR, String((p as { module: string }).module)) } : p);
    const dir = t.testdirName;
    const app = await startApp(t, {
      config: deepMerge(sample, { plugins, address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } } }),
    });
    t.equal((await app.request('GET', '/ping')).text, 'pong');
    const about = await app.request('GET', '/api');
    t.equal(about.status, 200);
    t.equal(about.body.app, 'datarhei-core');
    const loaded = app.service.app.kernel.plugins;
    if (file === 'minimal.json') t.same(loaded, ['process', 'disk-fs', 'memfs'], 'the process engine is always mounted, first');
    if (file === 'slim.json') t.notOk(loaded.includes('rtmp') || loaded.includes('srt'));
    if (file === 'with-vendor.json') t.same((await app.request('GET', '/vendor/motd')).body, { motd: 'hello from the vendor plugin' });
  });
}
