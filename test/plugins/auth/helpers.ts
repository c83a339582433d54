import { fileURLToPath } from 'node:url';
import { startApp, type Requester, type TestApp, type TestLike } from '../../helpers/app.ts';
import { createTestApp, type TestApp as KitApp } from '../../../testkit/index.ts';

/** The test-only plugin with one route per access class. */
export const PROBE = fileURLToPath(new URL('./fixtures/probe-plugin.ts', import.meta.url));

export const USER = 'admin';
export const PASS = 'pw-Secret-123';
export const SECRET = 'jwt-secret-abc';

export interface AuthAppOptions {
  /** Merged over `api.auth` (enabled with USER/PASS/SECRET by default). */
  auth?: Record<string, unknown>;
  /** Merged over `api`. */
  api?: Record<string, unknown>;
  /** The auth plugin's own settings (its `plugins` entry); the failure delay is tiny by default. */
  authPlugin?: Record<string, unknown>;
  /** Extra plugins after auth and the probe. */
  plugins?: unknown[];
  config?: Record<string, unknown>;
}

/**
 * The tests pose as clients behind a reverse proxy on this host (X-Forwarded-For, X-Real-IP from
 * 127.0.0.1): loopback is a trusted proxy here unless a test says otherwise (the default trusts none).
 */
export const LOCAL_PROXY = ['127.0.0.0/8', '::1/128'];

function withProxy(api: Record<string, unknown> | undefined): Record<string, unknown> {
  return { ...api, access: { trusted_proxies: LOCAL_PROXY, ...(api?.access as Record<string, unknown> | undefined) } };
}

function authConfig(o: AuthAppOptions): Record<string, unknown> {
  return {
    ...o.config,
    api: { ...withProxy(o.api), auth: { enable: true, username: USER, password: PASS, jwt: { secret: SECRET }, ...o.auth } },
    plugins: [{ name: 'auth', config: { fail_delay_ms: 10, fail_delay_max_ms: 40, ...o.authPlugin } }, PROBE, ...(o.plugins ?? [])],
  };
}

/** The app in-process (test kit, no port) with the auth plugin, the probe plugin and nothing else. */
export function startAuthApp(t: TestLike, o: AuthAppOptions = {}): Promise<KitApp> {
  return createTestApp({ t, config: authConfig(o) });
}

/** The same as a real service on a port, for what needs one (reloads). */
export function startAuthService(t: TestLike, o: AuthAppOptions = {}): Promise<TestApp> {
  return startApp(t, { config: authConfig(o) });
}

/** The app in-process without API auth: the auth and probe plugins only. */
export function startOpenApp(t: TestLike, config: Record<string, unknown> = {}): Promise<KitApp> {
  return createTestApp({ t, config: { ...config, api: withProxy(config.api as Record<string, unknown> | undefined), plugins: ['auth', PROBE] } });
}

/** Logs in and returns the tokens (fails the test through the thrown error otherwise). */
export async function login(app: Requester, username = USER, password = PASS, headers?: Record<string, string>) {
  const res = await app.request('POST', '/api/login', { body: { username, password }, headers });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  return res.body as { access_token: string; refresh_token: string };
}

export const UNAUTHORIZED = { code: 401, message: 'Unauthorized', details: ['Missing or invalid JWT token'] };
