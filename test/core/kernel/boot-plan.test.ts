import '../../../app/install.ts'; // this service's built-ins, installed into the core
import t, { type Test } from 'tap';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CoreService } from '../../../core/service.ts';
import { buildApp } from '../../../core/app.ts';
import { loadConfig } from '../../../core/config/load.ts';
import { planBoot } from '../../../core/kernel/plan.ts';
import { cleanEnv, request } from '../../helpers/app.ts';

/*
 * Issue 30, point 4: one boot plan. The configuration is validated and its plugins are located
 * and imported once per start; validation (boot, PUT, reload) imports nothing; buildApp mounts
 * the plan it is given.
 */

const VENDOR = "export default { name: 'counted', setup(ctx) { ctx.http.get('/counted', async () => ({ ok: true })); } };\n";

async function folder(t: Test): Promise<{ dir: string; configPath: string; vendor: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'core-plan-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'disk'), { recursive: true });
  const vendor = join(dir, 'counted.mjs');
  await writeFile(vendor, VENDOR);
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
    log: { level: 'silent' }, http: { threads: 0 }, plugins: ['*', './counted.mjs'],
  }));
  return { dir, configPath, vendor };
}

t.test('a start imports each configured module once; a PUT and a reload import nothing', async (t) => {
  const { configPath, vendor } = await folder(t);
  const calls: string[] = [];
  const importModule = (url: string) => { calls.push(url); return import(url); };
  const service = await CoreService.start({ configPath, env: cleanEnv(), importModule });
  t.teardown(() => service.close());
  t.same(calls, [pathToFileURL(vendor).href], 'the vendor module, once; built-ins are part of the build and never located');
  t.ok(service.app.kernel.plugins.includes('memfs') && service.app.kernel.plugins.includes('counted'), 'built-ins and the vendor plugin mounted');
  t.equal((await request(service.url, 'GET', '/counted')).status, 200);

  const put = await request(service.url, 'PUT', '/api/v3/config', { body: { name: 'renamed', rtmp: { enable: true } } });
  t.equal(put.status, 200, put.text);
  t.equal(await service.reload(), undefined, 'the reload went ahead');
  t.equal(service.app.kernel.config.name, 'renamed');
  t.same(calls, [pathToFileURL(vendor).href], 'still one import after a PUT and a reload');
});

t.test('buildApp mounts the plan it is given: required plugins first, then the graph order', async (t) => {
  const { configPath } = await folder(t);
  const loaded = await loadConfig(configPath, cleanEnv());
  let imports = 0;
  const plan = await planBoot(loaded.active, { configPath, importModule: (url) => { imports++; return import(url); } });
  t.equal(imports, 1);
  t.same(plan.required.map((p) => p.name), ['process']);
  t.ok(plan.order.findIndex((p) => p.name === 'metrics') > plan.order.findIndex((p) => p.name === 'sessions'), 'a provider before its consumer');
  const app = await buildApp(plan);
  t.teardown(() => app.close());
  t.same(app.kernel.plugins, [...plan.required, ...plan.order].map((p) => p.name));
  t.equal(app.loaded, plan.configured);
  t.equal(imports, 1, 'building imports nothing');
});

t.test('an invalid plan stops before anything is built, every error named', async (t) => {
  const { configPath } = await folder(t);
  const loaded = await loadConfig(configPath, cleanEnv());
  const bad = structuredClone(loaded.active);
  bad.plugins = ['memfs'];
  bad.rtmp.enable = true;
  bad.playout.enable = true;
  await t.rejects(planBoot(bad, { configPath }), /rtmp\.enable: plugin 'rtmp' is not loaded[\s\S]*playout\.enable: plugin 'playout' is not loaded/);
});
