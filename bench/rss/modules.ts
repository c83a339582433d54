import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Where idle RSS goes (issues 10, 11, 29). Two tables, each from a child process running the
 * built JavaScript (`scripts/build.mjs` runs first) with the service's runtime flags, after two
 * full GCs per step:
 * 1. what the service loads at boot, step by step in one process (each line adds to the last),
 *    then the service started with the default plugins and 5 s idle;
 * 2. each dependency that loads only when its feature is used (issue 29, point 2), alone on top
 *    of fastify: what a deployment that does not use the feature no longer holds.
 * Run: `node bench/rss/modules.ts`; writes bench/results/rss-modules-<date>.md.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const url = (p: string) => pathToFileURL(join(ROOT, p)).href;
const BOOT = [
  'pino', 'fastify', '@sinclair/typebox', '@sinclair/typebox/value', 'awilix/browser', url('sdk/index.js'), url('core/app.js'),
  url('core/service.js'), ...['memfs', 'disk-fs', 'auth', 'idp-login', 'sessions', 'metrics', 'events', 'playout', 'rtmp', 'srt', 'widget', 'graphql']
    .map((p) => url(`plugins/${p}/index.js`)),
];
const LAZY = [
  ['mercurius + graphql (first GraphQL query)', 'mercurius', 'graphql'],
  ['prom-client (no longer loaded: /metrics writes its text itself)', 'prom-client'],
  ['acme-client (tls.auto)', 'acme-client'],
  // what registering them pulls in: the YAML writer, the static file server and its globbing
  ['@fastify/swagger + swagger-ui (first docs view)', '@fastify/swagger', '@fastify/swagger-ui', 'yaml', '@fastify/static', 'fast-glob'],
  ['ajv via @fastify/ajv-compiler (first validated request)', '@fastify/ajv-compiler'],
  ['fast-json-stringify compiler (first serialized answer)', '@fastify/fast-json-stringify-compiler'],
  ['jose (api.auth.enable)', 'jose'],
  ['node-media-server (rtmp.enable)', 'node-media-server'],
];

/** The child: imports each step, printing `label<TAB>rss<TAB>heapUsed` after two GCs. */
const CHILD = `
const mb = (n) => (n / 1048576).toFixed(1);
const row = (label) => { gc(); gc(); const m = process.memoryUsage(); console.log([label, mb(m.rss), mb(m.heapUsed)].join('\\t')); };
const steps = JSON.parse(process.env.STEPS);
row('node (plain JavaScript entry)');
for (const group of steps) {
  for (const s of group.slice(1)) await import(s);
  row(group[0]);
}
if (process.env.SERVICE) {
  const { CoreService } = await import(${JSON.stringify(url('core/service.js'))});
  const core = await CoreService.start({ configPath: process.env.SERVICE, env: {} });
  row('service started (default plugins, routes)');
  await new Promise((r) => setTimeout(r, 5000));
  row('idle 5 s');
  await core.close();
}
process.exit(0);
`;

function run(steps: string[][], service?: string): string[][] {
  const r = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=2', '--input-type=module', '-e', CHILD], {
    cwd: ROOT, encoding: 'utf8', env: { ...process.env, MALLOC_ARENA_MAX: '2', STEPS: JSON.stringify(steps), SERVICE: service ?? '' },
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim().split('\n').filter((l) => l.includes('\t')).map((l) => l.split('\t'));
}

spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
const dir = mkdtempSync(join(tmpdir(), 'bench-rss-'));
const configPath = join(dir, 'config.json');
writeFileSync(configPath, JSON.stringify({
  address: '127.0.0.1:0', update_check: false, db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } }, http: { threads: 0 },
}));
const boot = run(BOOT.map((s) => [`+ ${s.replace(url(''), '')}`, s]), configPath);
rmSync(dir, { recursive: true, force: true });
const lines = [`# RSS by module: ${new Date().toISOString().slice(0, 10)}`, '',
  `Built JavaScript, \`--max-semi-space-size=2\`, MALLOC_ARENA_MAX=2 (the service's runtime flags); load average ${loadavg()[0]!.toFixed(2)}.`, '',
  '## What the boot loads, step by step (one process)', '', '| step | RSS MB | added MB | heap used MB |', '|---|---|---|---|'];
let last = 0;
for (const [label, rss, heap] of boot) {
  lines.push(`| ${label} | ${rss} | ${last ? (Number(rss) - last).toFixed(1) : '-'} | ${heap} |`);
  last = Number(rss);
}
lines.push('', '## Loaded only when used: each alone on top of fastify (one process each)', '', '| dependency | added MB | heap added MB |', '|---|---|---|');
for (const [label, ...mods] of LAZY) {
  const [, base, withIt] = run([['fastify', 'fastify'], [label!, ...mods]]);
  lines.push(`| ${label} | ${(Number(withIt![1]) - Number(base![1])).toFixed(1)} | ${(Number(withIt![2]) - Number(base![2])).toFixed(1)} |`);
}
writeFileSync(join(ROOT, `bench/results/rss-modules-${new Date().toISOString().slice(0, 10)}.md`), lines.join('\n') + '\n');
console.log(lines.join('\n'));
