import { request as httpRequest } from 'node:http';
import { startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { deepMerge } from '../../../core/config/schema-walk.ts';
import { createTestApp, type TestApp as KitApp } from '../../../testkit/index.ts';

/** The plugins the filesystem tests load: the real auth plugin provides basic auth. */
export const FS_PLUGINS = ['auth', 'disk-fs', 'memfs'];

export const MEM_USER = 'admin';
export const MEM_PASS = 'pw:ä/@';

/** `Authorization` header for HTTP Basic. */
export function basic(user = MEM_USER, pass = MEM_PASS): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` };
}

function fsConfig(config: Record<string, unknown>): Record<string, unknown> {
  const base = {
    plugins: FS_PLUGINS,
    storage: { memory: { auth: { enable: true, username: MEM_USER, password: MEM_PASS } } },
  };
  return deepMerge(base, config) as Record<string, unknown>;
}

/** Starts the service with both filesystems and memfs basic auth (admin / MEM_PASS). */
export function startFs(t: TestLike, config: Record<string, unknown> = {}): Promise<TestApp> {
  return startApp(t, { config: fsConfig(config) });
}

/** The same app in-process (test kit): for tests that need no socket of their own. */
export function startFsKit(t: TestLike, config: Record<string, unknown> = {}): Promise<KitApp> {
  return createTestApp({ t, config: fsConfig(config) });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  json: any;
}

/**
 * A request with the path sent byte for byte (fetch would resolve `..` and `%2e%2e` itself,
 * so escape attempts must go through this).
 */
export function rawRequest(base: string, method: string, path: string, opts: { headers?: Record<string, string>; body?: Buffer | string } = {}): Promise<RawResponse> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        let json: unknown;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode!, headers: res.headers, body, text, json });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}
