import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where idle RSS goes (issue 10 / 11): RSS after importing each module group in order into one
 * process (after two full GCs), then after the service starts with the default plugins and
 * after 5 s idle. Each line is what that step adds on top of the previous ones.
 * Run: `node --expose-gc bench/rss/modules.ts` (Node 24, type stripping); prints a table.
 */

const STEPS: string[] = [
  'pino', 'fastify', '@sinclair/typebox', '@sinclair/typebox/value', '@fastify/swagger', '@fastify/swagger-ui', 'jose', 'awilix',
  '../../sdk/index.ts', '../../core/app.ts', '../../core/service.ts',
  '../../plugins/memfs/index.ts', '../../plugins/disk-fs/index.ts', '../../plugins/auth/index.ts',
  '../../plugins/idp-login/index.ts', '../../plugins/widget/index.ts',
];

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const mb = (n: number) => (n / 1048576).toFixed(1);
const rows: string[] = ['| step | RSS MB | added MB | heap used MB |', '|---|---|---|---|'];
let last = 0;
function row(label: string): void {
  gc!();
  gc!();
  const m = process.memoryUsage();
  rows.push(`| ${label} | ${mb(m.rss)} | ${last ? mb(m.rss - last) : '-'} | ${mb(m.heapUsed)} |`);
  last = m.rss;
}

row('node with a .ts entry (type stripper loaded)');
for (const s of STEPS) {
  await import(s);
  row(`+ ${s.replace('../../', '')}`);
}
const dir = await mkdtemp(join(tmpdir(), 'bench-rss-'));
await mkdir(join(dir, 'disk'));
const configPath = join(dir, 'config.json');
await writeFile(configPath, JSON.stringify({
  address: '127.0.0.1:0', update_check: false, db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
}));
const { CoreService } = await import('../../core/service.ts');
const core = await CoreService.start({ configPath, env: {} });
row('service started (default plugins, routes, validators)');
await new Promise((r) => setTimeout(r, 5000));
row('idle 5 s');
await core.close();
await rm(dir, { recursive: true, force: true });
console.log(rows.join('\n'));
process.exit(0);
