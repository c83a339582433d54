import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import * as everything from '../../sdk/index.ts';
import * as contract from '../../sdk/contract.ts';
import * as toolkit from '../../sdk/toolkit.ts';
import { toApiError } from '../../core/http/errors.ts';
import { SDK_NAME } from '../../core/kernel/loader.ts';

const SDK = fileURLToPath(new URL('../../sdk/', import.meta.url));
const ROOT = join(SDK, '..');
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8')) as Record<string, any>;

t.test('sdk/package.json: the name and version the code exports, and the entries', async (t) => {
  const pkg = json(join(SDK, 'package.json'));
  t.equal(pkg.name, SDK_NAME);
  t.equal(pkg.version, everything.SDK_VERSION);
  t.same(Object.keys(pkg.exports).sort(), ['.', './package.json', './toolkit'], 'the test kit is its own package (@media-core/testkit)');
  for (const [entry, target] of Object.entries(pkg.exports) as [string, string | Record<string, string>][]) {
    if (typeof target === 'string') { t.ok(readFileSync(join(SDK, target)), `${target} exists`); continue; }
    // the built JavaScript by default (Node strips no types under node_modules), the sources for types and in-repo runs
    t.same(Object.keys(target), ['types', 'media-core-source', 'default'], `${entry}: conditions in order`);
    t.equal(target.types, target['media-core-source']);
    t.equal(target.default, target.types!.replace(/\.ts$/, '.js'));
    t.ok(readFileSync(join(SDK, target.types!)), `${target.types} exists`);
  }
  t.ok(json(join(ROOT, 'package.json')).workspaces.includes('sdk'), 'the root install links the SDK under its name');
});

t.test('every sdk file is in exactly one entry: the contract or the toolkit', async (t) => {
  const listed = (f: string) => [...readFileSync(join(SDK, f), 'utf8').matchAll(/from '\.\/([\w-]+)\.ts'/g)].map((m) => m[1]!);
  const inContract = listed('contract.ts');
  const inToolkit = listed('toolkit.ts');
  const files = readdirSync(SDK).filter((f) => f.endsWith('.ts') && !['index.ts', 'contract.ts', 'toolkit.ts'].includes(f)).map((f) => f.slice(0, -3));
  const wrong = files.filter((f) => Number(inContract.includes(f)) + Number(inToolkit.includes(f)) !== 1);
  t.same(wrong, [], 'add a new sdk file to sdk/contract.ts (refs, hooks, services) or sdk/toolkit.ts (helpers)');
  t.same(Object.keys(everything).sort(), [...new Set([...Object.keys(contract), ...Object.keys(toolkit)])].sort(), 'index.ts = contract + toolkit');
});

t.test('errors are recognised across two copies of the SDK (brands, not instanceof)', async (t) => {
  // a second module instance, as a plugin with its own install of the SDK would have
  const copy = (await import(new URL('../../sdk/errors.ts?copy=2', import.meta.url).href)) as typeof import('../../sdk/errors.ts');
  t.not(copy.ApiError, everything.ApiError, 'two distinct classes');
  const foreign = new copy.ApiError(418, 'Teapot', ['short and stout'], 'TEAPOT');
  t.notOk(foreign instanceof everything.ApiError, 'instanceof fails across copies');
  t.ok(everything.isApiError(foreign));
  t.ok(copy.isApiError(new everything.ApiError(400)));
  t.notOk(everything.isApiError(new Error('plain')));
  t.notOk(everything.isApiError({ status: 400 }), 'a look-alike without the brand is not one');
  const body = toApiError(foreign);
  t.same([body.status, body.errorCode, body.toBody()], [418, 'TEAPOT', { code: 418, message: 'Teapot', details: ['short and stout'] }], 'the core keeps its status');
  const boot = new copy.BootError('stop', { code: 'X_FAIL' });
  t.ok(everything.isBootError(boot));
  t.equal(boot.code, 'X_FAIL');
  t.equal(new everything.BootError('stop').code, 'BOOT');
  t.notOk(everything.isBootError(foreign));
});
