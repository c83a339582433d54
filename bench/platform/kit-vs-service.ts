/**
 * What the test kit saves per test: boot, 20 requests and close of the auth test app, as a real
 * service on a port (test/helpers/app.ts) and in-process (the test kit, testkit/). Also the old default of
 * every built-in ("*") against the chosen ones. Run: node bench/platform/kit-vs-service.ts
 * Writes bench/results/platform-<date>.{json,md}.
 */
import { writeFileSync } from 'node:fs';
import { startApp } from '../../test/helpers/app.ts';
import { createTestApp } from '../../testkit/index.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const auth = { api: { auth: { enable: true, username: 'admin', password: 'pw-Secret-123', jwt: { secret: 'x' } } } };

const results: { label: string; msPerTest: number }[] = [];

async function time(label: string, once: () => Promise<void>): Promise<void> {
  await once(); // warm the module cache
  const start = performance.now();
  for (let i = 0; i < ROUNDS; i++) await once();
  const msPerTest = Math.round((performance.now() - start) / ROUNDS);
  results.push({ label, msPerTest });
  console.log(`${label.padEnd(44)} ${msPerTest} ms per test`);
}

async function viaService(plugins: unknown[]): Promise<void> {
  const closers: (() => unknown)[] = [];
  const app = await startApp({ teardown: (fn) => closers.push(fn) }, { config: { ...auth, plugins } });
  for (let i = 0; i < 20; i++) await app.request('POST', '/api/login', { body: { username: 'admin', password: 'pw-Secret-123' } });
  for (const c of closers.reverse()) await c();
}

async function viaKit(plugins: unknown[]): Promise<void> {
  const kit = await createTestApp({ config: { ...auth, plugins } });
  for (let i = 0; i < 20; i++) await kit.request('POST', '/api/login', { body: { username: 'admin', password: 'pw-Secret-123' } });
  await kit.close();
}

await time('service on a port, plugins ["*"]', () => viaService(['*']));
await time('service on a port, plugins ["auth","widget"]', () => viaService(['auth', 'widget']));
await time('test kit, plugins ["auth","widget"]', () => viaKit(['auth', 'widget']));

const date = new Date().toISOString().slice(0, 10);
const out = new URL(`../results/platform-${date}`, import.meta.url);
writeFileSync(`${out.pathname}.json`, JSON.stringify({ date, rounds: ROUNDS, results }, null, 2) + '\n');
writeFileSync(`${out.pathname}.md`, [`# Test kit against a service on a port (${date}, ${ROUNDS} rounds)`, '',
  'One test = boot, 20 logins, close.', '', '| setup | ms per test |', '|---|---|',
  ...results.map((r) => `| ${r.label} | ${r.msPerTest} |`), ''].join('\n'));
