import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import type { TestLike } from './app.ts';

const SERVER_DIR = fileURLToPath(new URL('../../scripts/s3-test-server/', import.meta.url));
const SERVER = join(SERVER_DIR, 'server.cjs');

/** An S3 store for a test: the local test server, or the operator's (S3_TEST_* variables). */
export interface S3Target {
  /** `host:port`, without scheme (as `storage.s3[].endpoint`). */
  endpoint: string;
  useSsl: boolean;
  region: string;
  accessKey: string;
  secret: string;
  /** A bucket of this test (a fresh name unless S3_TEST_BUCKET is set). */
  bucket: string;
  /** True for the local server (the outage tests stop and restart it). */
  local: boolean;
  /** Stops the local server (the store goes away: connections are refused). */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder. */
  start(): Promise<void>;
  /** Freezes the local server (SIGSTOP): connections are accepted, nothing is answered (a hung store). */
  pause(): void;
  /** Lets it run again (SIGCONT). */
  resume(): void;
}

/** Why the S3 tests cannot run here, or undefined. */
export function s3Unavailable(): string | undefined {
  if (process.env.S3_TEST_ENDPOINT) return undefined;
  if (!existsSync(join(SERVER_DIR, 'node_modules', '@20minutes', 's3rver'))) return 'the S3 test server is not installed (bash scripts/ensure-test-deps.sh)';
  return undefined;
}

function launch(dir: string, port: number): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--openssl-legacy-provider', SERVER, dir, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`the S3 test server did not start: ${err}`)); }, 15_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ child, port: Number(m[1]) }); }
    });
    child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-2000); });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the S3 test server exited (${code}): ${err}`)); });
  });
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * The S3 store of a test file: with S3_TEST_ENDPOINT (host:port; S3_TEST_SSL=1, S3_TEST_REGION,
 * S3_TEST_ACCESS_KEY, S3_TEST_SECRET, S3_TEST_BUCKET) the operator's, else the local test server
 * started on a free port with a temp folder, stopped and removed at teardown.
 */
export async function startS3(t: TestLike): Promise<S3Target> {
  const bucket = process.env.S3_TEST_BUCKET ?? `t-${randomBytes(5).toString('hex')}`;
  const e = process.env;
  if (e.S3_TEST_ENDPOINT) {
    const none = async () => { throw new Error('an external S3 store cannot be stopped by the test'); };
    const frozen = () => { throw new Error('an external S3 store cannot be paused by the test'); };
    return {
      endpoint: e.S3_TEST_ENDPOINT, useSsl: e.S3_TEST_SSL === '1', region: e.S3_TEST_REGION ?? 'us-east-1',
      accessKey: e.S3_TEST_ACCESS_KEY ?? '', secret: e.S3_TEST_SECRET ?? '', bucket, local: false, stop: none, start: none,
      pause: frozen, resume: frozen,
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 's3-test-'));
  let { child, port } = await launch(dir, 0);
  let current: ChildProcess | undefined = child;
  t.teardown(async () => {
    await stopChild(current);
    await rm(dir, { recursive: true, force: true });
  });
  return {
    endpoint: `127.0.0.1:${port}`, useSsl: false, region: 'us-east-1', accessKey: 'S3RVER', secret: 'S3RVER', bucket, local: true,
    async stop() {
      await stopChild(current);
      current = undefined;
    },
    async start() {
      ({ child, port } = await launch(dir, port));
      current = child;
    },
    pause() {
      current?.kill('SIGSTOP');
    },
    resume() {
      current?.kill('SIGCONT');
    },
  };
}

/** A `storage.s3` entry for the target. */
export function s3Entry(s3: S3Target, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'cloud', mountpoint: '/cloud', auth: { enable: false, username: '', password: '' },
    endpoint: s3.endpoint, access_key_id: s3.accessKey, secret_access_key: s3.secret, bucket: s3.bucket,
    region: s3.region, use_ssl: s3.useSsl, ...over,
  };
}
