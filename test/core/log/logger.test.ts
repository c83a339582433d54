import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createLogger } from '../../../core/log/logger.ts';
import { cleanEnv } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/** A stream that keeps what was written; `isTTY` decides what `auto` picks. */
function capture(isTTY = false) {
  const lines: string[] = [];
  const out = Object.assign(new Writable({
    write(chunk, _enc, cb) { lines.push(...String(chunk).split('\n').filter(Boolean)); cb(); },
  }), { isTTY });
  return { out, lines };
}

/** Keys of a JSON object text in order, duplicates kept (JSON.parse would hide them). */
function rawKeys(line: string): string[] {
  return [...line.matchAll(/[{,]"([^"]+)":/g)].map((m) => m[1]!);
}

t.test('JSON lines carry each key once, the innermost component wins', async (t) => {
  const { out, lines } = capture();
  const { log } = createLogger({ level: 'info', maxLines: 10, stdout: out, format: 'json' });
  log.info('core line');
  const http = log.child({ component: 'HTTP' });
  http.info({ x: 1 }, 'http line');
  http.child({ reqId: 7 }).warn('request line');
  log.child({ component: 'rtmp' }).child({ component: 'rtmp-session' }).info('nested');
  await waitFor(() => lines.length === 4);
  for (const line of lines) {
    const keys = rawKeys(line);
    t.same(keys, [...new Set(keys)], `no repeated key: ${line}`);
  }
  t.same(lines.map((l) => JSON.parse(l).component), ['Core', 'HTTP', 'HTTP', 'rtmp-session']);
  t.equal(JSON.parse(lines[2]!).reqId, 7);
});

t.test('console format for a terminal, topics filter the output but not the ring', async (t) => {
  const tty = capture(true);
  const { log, ring } = createLogger({ level: 'info', maxLines: 10, stdout: tty.out, format: 'auto', topics: ['HTTP'] });
  log.info('not shown');
  log.child({ component: 'HTTP' }).info({ path: '/x' }, 'shown');
  await waitFor(() => tty.lines.length === 1 && ring.lines().length === 2);
  t.match(tty.lines[0], /^ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ level=INFO component="HTTP" msg="shown" path="\/x"$/);
  t.equal(ring.console().length, 2, 'the ring keeps every component');

  const pipe = capture(false);
  const auto = createLogger({ level: 'info', maxLines: 10, stdout: pipe.out, format: 'auto' });
  auto.log.info('piped');
  await waitFor(() => pipe.lines.length === 1);
  t.equal(JSON.parse(pipe.lines[0]!).msg, 'piped', 'auto is JSON when not a terminal');

  const forced = capture(false);
  createLogger({ level: 'info', maxLines: 10, stdout: forced.out, format: 'console' }).log.info('forced');
  await waitFor(() => forced.lines.length === 1);
  t.match(forced.lines[0], /component="Core" msg="forced"/);
});

t.test('the CLI writes valid JSON lines to stdout', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'core-log-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({ address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } }, update_check: false, log: { format: 'json' } }));
  const main = fileURLToPath(new URL('../../../app/main.ts', import.meta.url));
  const child = spawn(process.execPath, [main, '--config', configPath], { cwd: dir, env: cleanEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise((r) => child.once('exit', r));
  t.teardown(async () => { if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited; } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  await waitFor(() => out.includes('core ready'), { timeout: 30_000, what: 'core ready on stdout' });
  const lines = out.split('\n').filter(Boolean);
  t.ok(lines.length >= 2);
  for (const line of lines) {
    const keys = rawKeys(line);
    t.same(keys, [...new Set(keys)], `no repeated key: ${line}`);
    t.doesNotThrow(() => JSON.parse(line));
  }
});
