import t from 'tap';
import { spawn } from 'node:child_process';
import { placeholdersRef } from '../../sdk/index.ts';
import { rtmpServiceRef, type RtmpService } from '../../plugins/rtmp/ref.ts';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request, startApp, type TestResponse } from '../helpers/app.ts';
import { s3Entry, s3Unavailable, startS3 } from '../helpers/s3.ts';
import { waitFor } from '../helpers/wait.ts';
import { examples, mismatch, textMismatch, type Example } from './examples.ts';

/*
 * Issue 44.7: the docs' examples run. Every `http request` block of the Markdown files (with the
 * answer block after it; the form is described in examples.ts and in CONTRIBUTING.md) is sent, in
 * order per file, to one service with every built-in plugin on (the cluster aside: it needs NATS),
 * with the credentials the examples show, and its answer must match the one shown. Every route
 * family's README must hold at least one example.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REQUIRED = [
  'docs/first-steps.md', 'core/process/README.md', 'core/config/README.md', 'core/http/README.md',
  ...['auth', 'disk-fs', 'memfs', 's3-fs', 'rtmp', 'srt', 'sessions', 'metrics', 'events', 'playout', 'recordings', 'webrtc', 'widget', 'graphql', 'llhls', 'ladders', 'iam']
    .map((p) => `plugins/${p}/README.md`),
];
/** Credentials the examples show (docs/first-steps.md logs in with them). */
const ADMIN = { username: 'admin', password: 'secret' };

function markdownFiles(): string[] {
  const out: string[] = ['README.md'];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir)).sort()) {
      const path = join(dir, name);
      if (name === 'node_modules' || name.startsWith('.')) continue;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) out.push(path);
    }
  };
  for (const dir of ['docs', 'core', 'plugins', 'sdk', 'examples']) if (existsSync(join(ROOT, dir))) walk(dir);
  return out;
}

/** Loopback ports of the playout relays (none runs here; the range must be set when playout is on). */
const PLAYOUT = 45000 + Math.floor(Math.random() * 300) * 10;

const byFile = new Map(markdownFiles().map((f) => [f, examples(f, readFileSync(join(ROOT, f), 'utf8'))] as const));

t.test('every route family\'s README shows at least one complete request and its answer', async (t) => {
  for (const file of REQUIRED) t.ok((byFile.get(file)?.length ?? 0) > 0, `${file} has a runnable example`);
});

t.test('the examples of the docs work against a live service with every plugin on', async (t) => {
  const noS3 = s3Unavailable();
  const s3 = noS3 ? undefined : await startS3(t);
  const app = await startApp(t, { config: {
    plugins: ['*'],
    api: { auth: { enable: true, ...ADMIN, jwt: { secret: 'docs-examples-jwt-secret-0123' } } },
    storage: { memory: { auth: { enable: true, username: 'admin', password: 'memfs-secret' } }, ...(s3 ? { s3: [s3Entry(s3)] } : {}) },
    rtmp: { enable: true, address: '127.0.0.1:0', token: 'docs-rtmp-token' }, srt: { enable: true, address: '127.0.0.1:0' },
    webrtc: { enable: true, bind_address: '127.0.0.1' }, sessions: { enable: true, ip_ignorelist: [] },
    metrics: { enable: true, enable_prometheus: true, interval_sec: 1 }, playout: { enable: true, min_port: PLAYOUT, max_port: PLAYOUT + 10 },
    recordings: { enable: true }, llhls: { enable: true }, ladders: { enable: true }, iam: { enable: true },
  } });
  const token = (await app.request('POST', '/api/login', { body: ADMIN })).body.access_token as string;
  const ph = app.service.app.kernel.services.resolve(placeholdersRef) as { get(n: string): { value(s: string): string } };
  const listeners = {
    'rtmp://localhost:1935': `rtmp://127.0.0.1:${(app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService).ports().rtmp}`,
    'srt://localhost:6000': `srt://127.0.0.1:${/:(\d+)\?/.exec(ph.get('srt').value('input'))![1]}`,
  };
  for (const [file, list] of byFile) {
    if (list.length === 0) continue;
    await t.test(file, { skip: file === 'plugins/s3-fs/README.md' ? noS3 : undefined }, async (t) => {
      for (const ex of list) {
        const why = ex.kind === 'command' ? await runCommand(ex, listeners) : await run(app.url, token, ex);
        t.equal(why, undefined, `${ex.method} ${ex.path} (${file}:${ex.line})`);
      }
    });
  }
});

/** Runs one command example (ffmpeg, on the test service's listeners); why it failed, or undefined. */
async function runCommand(ex: Example, listeners: Record<string, string>): Promise<string | undefined> {
  const argv = (JSON.parse(ex.body!) as string[]).map((a) => Object.entries(listeners).reduce((s, [shown, real]) => s.replace(shown, real), a));
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', ...argv.slice(1)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-2000); });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve)).finally(() => clearTimeout(timer));
  if (ex.status === 0 && code !== 0) return `ffmpeg exited ${code}, the docs show it succeed: ${err}`;
  if (ex.status !== 0 && code === 0) return 'ffmpeg succeeded, the docs show it fail';
  return undefined;
}

/** Sends one example (again and again until it matches when it polls); why it failed, or undefined. */
async function run(base: string, token: string, ex: Example): Promise<string | undefined> {
  const once = async () => check(ex, await send(base, token, ex));
  if (!ex.poll) return once();
  let last: string | undefined;
  try {
    await waitFor(async () => (last = await once()) === undefined, { timeout: 40_000, interval: 500, what: ex.path });
    return undefined;
  } catch {
    return `still not matching after 40 s: ${last}`;
  }
}

function send(base: string, token: string, ex: Example): Promise<TestResponse> {
  const headers = { ...ex.headers };
  const auth = headers.authorization;
  if (auth === 'none') delete headers.authorization;
  else if (auth === undefined) headers.authorization = `Bearer ${token}`;
  if (ex.body !== undefined) headers['content-type'] ??= 'application/json';
  return request(base, ex.method, ex.path, { headers, ...(ex.body !== undefined ? { raw: ex.body } : {}) });
}

function check(ex: Example, res: TestResponse): string | undefined {
  if (res.status !== ex.status) return `status ${res.status}, the docs show ${ex.status}: ${res.text.slice(0, 300)}`;
  if (ex.kind === 'text') return textMismatch(ex.answer, res.text);
  if (ex.answer.trim() === '') return undefined;
  let shown: unknown;
  try { shown = JSON.parse(ex.answer); } catch (err) { return `the answer shown is not JSON: ${(err as Error).message}`; }
  let actual: unknown = res.body;
  if (typeof actual === 'string') { try { actual = JSON.parse(actual); } catch { /* a text answer to a json block: the mismatch says so */ } }
  return mismatch(shown, actual);
}

