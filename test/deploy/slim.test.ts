import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestApp } from '../../testkit/index.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Set by scripts/test-slim.sh, which runs this file in a copy installed with SLIM=1. */
const SLIM = !!process.env.SLIM;
const json = (p: string) => JSON.parse(readFileSync(join(ROOT, p), 'utf8')) as Record<string, any>;

t.test('RTMP and SRT keep their npm packages in their own workspaces, out of the root', async (t) => {
  const root = json('package.json');
  for (const dep of ['node-media-server', 'node-addon-api']) t.notOk(root.dependencies[dep], `${dep} is not a root dependency`);
  t.equal(json('plugins/rtmp/package.json').dependencies['node-media-server'], '4.4.3');
  t.ok(json('plugins/srt/package.json').dependencies['node-addon-api']);
  t.ok(root.workspaces.includes('plugins/rtmp') && root.workspaces.includes('plugins/srt'));
  t.ok(root.optionalDependencies.node, 'the pinned Node stays a root (optional) dependency: a slim install keeps it');
});

t.test('the slim sample starts without RTMP or SRT code', async (t) => {
  const slim = JSON.parse(readFileSync(join(ROOT, 'sample-config/slim.json'), 'utf8')) as { plugins: string[] };
  const kit = await createTestApp({ t, plugins: slim.plugins });
  t.same(kit.app.kernel.plugins, ['process', ...slim.plugins]);
  t.equal((await kit.request('GET', '/ping')).text, 'pong');
  const enable = await kit.request('PUT', '/api/v3/config', { body: { rtmp: { enable: true } } });
  t.equal(enable.status, 409, 'turning RTMP on without its plugin is refused');
});

t.test('a slim install has no node-media-server or addon headers, and every built-in still loads', { skip: !SLIM && 'only in the slim copy (scripts/test-slim.sh)' }, async (t) => {
  t.notOk(existsSync(join(ROOT, 'node_modules', 'node-media-server')), 'node-media-server not installed');
  t.notOk(existsSync(join(ROOT, 'node_modules', 'node-addon-api')), 'node-addon-api not installed');
  t.ok(existsSync(join(ROOT, 'node_modules', 'node', 'bin', 'node')), 'the pinned Node is installed');
  // rtmp loads nothing of node-media-server until it is enabled; srt needs its addon only when enabled
  const all = await createTestApp({ t, config: { plugins: ['*'] } });
  t.ok(all.app.kernel.plugins.includes('rtmp') && all.app.kernel.plugins.includes('srt'));
  await t.rejects(createTestApp({ config: { plugins: ['*'], rtmp: { enable: true, address: '127.0.0.1:0' } } }),
    /node-media-server/, 'enabling RTMP names the missing package');
});
