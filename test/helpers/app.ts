import '../../app/install.ts'; // this service's built-ins, installed into the core
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreService } from '../../core/service.ts';
import { deepMerge } from '../../core/config/schema-walk.ts';

/** The subset of tap's Test that the helpers need. */
export interface TestLike {
  teardown(fn: () => unknown): void;
}

export interface TestApp {
  service: CoreService;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Temp folder holding config.json, db/ and disk/. */
  dir: string;
  configPath: string;
  /** fetch against the app; JSON bodies are encoded, responses decoded when JSON. */
  request(method: string, path: string, opts?: RequestOpts): Promise<TestResponse>;
}

/** What most plugin tests use of an app: requests (a started service or the in-process test kit). */
export type Requester = Pick<TestApp, 'request'>;

export interface RequestOpts {
  body?: unknown;
  /** Raw body, sent as is (string or bytes). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  token?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * Starts the real service on 127.0.0.1 port 0 with a temp config file; closed and removed at
 * teardown. `config` is merged over the test defaults (quiet log, temp folders).
 */
export async function startApp(t: TestLike, opts: { config?: Record<string, unknown>; env?: NodeJS.ProcessEnv; dir?: string } = {}): Promise<TestApp> {
  const dir = opts.dir ?? await mkdtemp(join(tmpdir(), 'core-test-'));
  const configPath = join(dir, 'config.json');
  if (!opts.dir) {
    await mkdir(join(dir, 'disk'), { recursive: true });
    const base = {
      address: '127.0.0.1:0',
      db: { dir: join(dir, 'db') },
      storage: { disk: { dir: join(dir, 'disk') } },
      log: { level: 'info' },
      update_check: false,
      // the default is auto (one per core but one from 4 cores): the suite is the same on every machine,
      // the threads' tests set their count; CORE_TEST_THREADS=2 runs the whole suite with threads on
      http: { threads: testThreads() },
    };
    await writeFile(configPath, JSON.stringify(deepMerge(base, opts.config ?? {}), null, 2));
  }
  const env = opts.env ?? cleanEnv();
  let service: CoreService;
  try {
    service = await CoreService.start({ configPath, env });
  } catch (err) {
    if (!opts.dir) await rm(dir, { recursive: true, force: true });
    throw err;
  }
  t.teardown(async () => {
    await service.close();
    if (!opts.dir) await rm(dir, { recursive: true, force: true });
  });
  const app: TestApp = {
    service,
    get url() { return service.url; },
    dir,
    configPath,
    request: (method, path, r = {}) => request(service.url, method, path, r),
  };
  return app;
}

/** The process environment without CORE_* variables, so a developer's shell cannot leak in. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CORE_')) env[k] = v;
  return { ...env, ...extra };
}

export async function request(base: string, method: string, path: string, r: RequestOpts = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...(r.headers ?? {}) };
  let body: string | Buffer | undefined = r.raw;
  if (r.body !== undefined) {
    body = JSON.stringify(r.body);
    headers['content-type'] ??= 'application/json';
  }
  if (r.token) headers.authorization = `Bearer ${r.token}`;
  const res = await fetch(base + path, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') {
    try { parsed = JSON.parse(text); } catch { /* keep text */ }
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Serving threads of the suite's services: 0, or `CORE_TEST_THREADS` (the threads-on run of the whole suite). */
export function testThreads(): number {
  const n = Number(process.env.CORE_TEST_THREADS ?? 0);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}
