import '../../../../app/install.ts'; // this service's built-ins, installed into the core
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyServiceRef, ServiceRef } from '../../../../sdk/index.ts';
import { buildApp } from '../../../../core/app.ts';
import { loadConfig } from '../../../../core/config/load.ts';
import { ConfigStore } from '../../../../core/config/store.ts';
import type { TestLike } from '../../../helpers/app.ts';

/*
 * This checkout's app in process, with services overridden (a clock the test advances). The test
 * kit does the same through its package name, which a worktree may resolve to another checkout.
 */

export interface InProcessApp {
  request(method: string, path: string, opts?: { body?: unknown }): Promise<{ status: number; body: any }>;
  services: { get<T>(ref: ServiceRef<T, false>): T };
}

export async function inProcessApp(t: TestLike, overrides: readonly { ref: AnyServiceRef; impl: unknown }[]): Promise<InProcessApp> {
  const dir = await mkdtemp(join(tmpdir(), 'ondemand-'));
  await mkdir(join(dir, 'disk'), { recursive: true });
  const configPath = join(dir, 'config.json');
  const config = { address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } }, update_check: false, plugins: ['events'] };
  await writeFile(configPath, JSON.stringify(config));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
  const loaded = await loadConfig(configPath, env);
  const app = await buildApp(loaded.active, { configStore: new ConfigStore(loaded, env), env, overrides, pluginBase: process.cwd() });
  const keepAlive = setInterval(() => {}, 60_000);
  t.teardown(async () => {
    await app.close();
    clearInterval(keepAlive);
    await rm(dir, { recursive: true, force: true });
  });
  return {
    request: async (method, path, opts = {}) => {
      const r = await app.http.inject({
        method: method as 'GET', url: path, payload: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        headers: opts.body === undefined ? {} : { 'content-type': 'application/json' },
      });
      return { status: r.statusCode, body: r.body ? JSON.parse(r.body) : undefined };
    },
    services: { get: (ref) => app.kernel.services.resolve(ref) as never },
  };
}
