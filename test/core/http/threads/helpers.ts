import { request, type IncomingHttpHeaders } from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import type { TestApp, TestLike } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';

/** One request on a fresh connection (so the kernel picks a listener each time); the path goes out as written. */
export function fresh(url: string, opts: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<{ status: number; body: Buffer; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    // the path is sent as written (a URL object would resolve `..` and `%2e%2e` before sending)
    const m = /^http:\/\/(\[[^\]]+\]|[^/:]+):(\d+)(.*)$/.exec(url)!;
    const req = request({ host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]), path: m[3] || '/', method: opts.method ?? 'GET', agent: false, headers: { connection: 'close', ...opts.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Test config: threads on, memfs writes open, sessions off (so threads answer memfs reads themselves). */
export function threadsConfig(threads: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    http: { threads },
    sessions: { enable: false },
    storage: { memory: { auth: { enable: false } } },
    ...extra,
  };
}

export type Answer = { status: number; body: Buffer; headers: IncomingHttpHeaders };
const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
export const comparable = (a: Answer) => JSON.stringify({
  status: a.status, body: a.body.toString(),
  headers: Object.fromEntries(Object.entries(a.headers).filter(([k]) => !VOLATILE.has(k)).sort(([x], [y]) => x.localeCompare(y))),
});

/** Sends `make(n)` over fresh connections until both threads `key` a request; returns the answers unlike `want`. */
export async function spread(app: TestApp, key: 'served' | 'forwarded', send: (n: number) => Promise<Answer>, want: Answer): Promise<string[]> {
  const wrong: string[] = [];
  const before = await app.service.threads.stats();
  let n = 0;
  await waitFor(async () => {
    for (let i = 0; i < 6; i++) {
      const got = await send(n++);
      if (comparable(got) !== comparable(want)) wrong.push(comparable(got));
    }
    const now = await app.service.threads.stats();
    return now.every((s, i) => s[key] > before[i]![key]);
  }, { timeout: 30_000, what: `both threads ${key}` });
  return wrong;
}

/** Runs ffmpeg with `args` until it exits (killed in teardown); its stderr is kept. */
export function runFfmpeg(t: TestLike, args: string[]): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => { err += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, stderr: () => err, exited };
}
