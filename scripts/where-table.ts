// Writes the "Where things are" table of README.md, between the where-table markers (run: node
// scripts/where-table.ts; --check exits 1 when it is stale). A row per built-in plugin of this build
// (app/built-ins.ts, itself generated from plugins/*/index.ts), so no plugin can be missing,
// described by the `<!-- where: ... -->` line of its README; a row per core folder with a README
// that has such a line; then the fixed rows of the other folders.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTINS } from '../app/built-ins.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const README = join(ROOT, 'README.md');
export const BEGIN = '<!-- where-table:begin -->';
export const END = '<!-- where-table:end -->';

const HEAD: Array<[string, string]> = [
  ['app/', 'the service as it runs, the package `@media-core/app`: the core with every plugin of `plugins/` built in (the generated table of built-ins and the whole config schema); `npm start` runs its `main.ts`'],
  ['core/', 'kernel (config, plugin graph, DI, hooks, HTTP front door, the file door of the public mounts, serving threads, persistence) and the process engine; imports no plugin (a build hands it its built-ins)'],
  ['sdk/', 'the only module plugins import, also as the package `@media-core/sdk`: the contract (`definePlugin`, service and hook refs, errors, config schemas), `/toolkit` (file-serving helpers); it imports nothing of `core/`'],
  ['testkit/', 'the in-process test kit, the package `@media-core/testkit` (on `@media-core/sdk` and `@media-core/core`, the package of `core/`); installable in a vendor\'s project'],
];
const TAIL: Array<[string, string]> = [
  ['examples/http-ts-ingest/', 'a vendor plugin in its own package, loaded by name: HTTP push of MPEG-TS, `{httpts,name=..}` for processes'],
  ['docs/first-steps.md', 'a newcomer\'s first page: publish a stream, play it over HLS and WebRTC, record it, restream it (requests the tests run)'],
  ['sample-config/', 'configuration examples for typical deployments'],
  ['test/', 'tap tests, mirroring the source tree; in-process through the test kit, or the real service on port 0; `test/journey/` drives the whole service as its clients do'],
  ['bench/', 'benchmarks (see `bench/README.md`, whose first table has the measured figures with their commands); results in `bench/results/`'],
  ['deploy/', 'systemd unit and Dockerfile'],
  ['scripts/', 'start, test, runtime selection, native addon build, generated docs'],
];

/** The `<!-- where: ... -->` line of a README (one line), or undefined. */
export function whereLine(text: string): string | undefined {
  return /<!-- where: (.+?) -->/.exec(text)?.[1]?.trim();
}

/** The table's rows; throws naming every plugin whose README lacks its where line. */
export function rows(root = ROOT): Array<[string, string]> {
  const out: Array<[string, string]> = [...HEAD];
  for (const dir of readdirSync(join(root, 'core')).sort()) {
    const readme = join(root, 'core', dir, 'README.md');
    const what = existsSync(readme) ? whereLine(readFileSync(readme, 'utf8')) : undefined;
    if (what) out.push([`core/${dir}/`, what]);
  }
  const missing: string[] = [];
  for (const { def, optIn } of BUILTINS) {
    const readme = join(root, 'plugins', def.name, 'README.md');
    const what = existsSync(readme) ? whereLine(readFileSync(readme, 'utf8')) : undefined;
    if (!what) { missing.push(`plugins/${def.name}/README.md`); continue; }
    out.push([`plugins/${def.name}/`, `${what}${optIn ? ' (opt-in: never in `"*"`)' : ''}`]);
  }
  if (missing.length) throw new Error(`no "<!-- where: ... -->" line in ${missing.join(', ')}`);
  return [...out, ...TAIL];
}

export function table(root = ROOT): string {
  return ['| path | what |', '|---|---|', ...rows(root).map(([p, w]) => `| \`${p}\` | ${w.replace(/\|/g, '\\|')} |`)].join('\n') + '\n';
}

/** `text` with the part between the markers replaced by the table. */
export function withTable(text: string, root = ROOT): string {
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README.md needs the markers ${BEGIN} and ${END}`);
  return `${text.slice(0, a + BEGIN.length)}\n${table(root)}${text.slice(b)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = readFileSync(README, 'utf8');
  if (process.argv.includes('--check')) {
    if (withTable(text) !== text) { console.error('stale: README.md (run: node scripts/where-table.ts)'); process.exit(1); }
    console.log('README.md where table: up to date');
  } else writeFileSync(README, withTable(text));
}
