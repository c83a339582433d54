// Writes the catalogue of services and hooks into CONTRIBUTING.md, between the sdk-catalogue
// markers, from sdk/*.ts, each plugin's contract (plugins/<name>/api.ts) and their JSDoc
// (run: node scripts/sdk-catalogue.ts).
// Read from the source text, not by importing: the docs are comments, and the catalogue names
// the file each ref is declared in.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const BEGIN = '<!-- sdk-catalogue:begin -->';
export const END = '<!-- sdk-catalogue:end -->';

const KINDS: Record<string, string> = {
  SyncHook: 'notify', AsyncParallelHook: 'notify (async)', AsyncSeriesHook: 'notify (async, in order)',
  SyncBailHook: 'veto (first answer wins)', AsyncSeriesBailHook: 'veto (async, first answer wins)',
  SyncWaterfallHook: 'transform (each tap gets the previous result)', AsyncSeriesWaterfallHook: 'transform (async)',
};

/** The first paragraph of the JSDoc block that ends right above line `i`, on one line. */
function summaryAbove(lines: string[], i: number): string {
  let j = i - 1;
  if (j < 0 || !lines[j]!.trim().endsWith('*/')) return '';
  let k = j;
  while (k >= 0 && !lines[k]!.includes('/**')) k--;
  const text = lines.slice(k, j + 1).map((l) => l.replace(/^\s*(\/\*\*|\*\/|\*)\s?/, '').replace(/\*\/\s*$/, '').trim());
  const end = text.findIndex((l, n) => n > 0 && (l === '' || l.startsWith('@')));
  return text.slice(0, end < 0 ? undefined : end).join(' ').replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
}

interface Service { ref: string; id: string; type: string; many: boolean; file: string; about: string }
interface Hook { ref: string; owner: string; name: string; kind: string; args: string; file: string; about: string }

/** The files refs are declared in, by their path in the repository: sdk/*.ts, then plugins/<name>/api.ts. */
function sources(sdkDir: string, pluginsDir: string): [string, string][] {
  const out: [string, string][] = readdirSync(sdkDir).filter((f) => f.endsWith('.ts')).sort().map((f) => [`sdk/${f}`, join(sdkDir, f)]);
  const plugins = existsSync(pluginsDir) ? readdirSync(pluginsDir).sort() : [];
  for (const name of plugins) if (existsSync(join(pluginsDir, name, 'api.ts'))) out.push([`plugins/${name}/api.ts`, join(pluginsDir, name, 'api.ts')]);
  return out;
}

export function scan(sdkDir = join(ROOT, 'sdk'), pluginsDir = join(ROOT, 'plugins')): { services: Service[]; hooks: Hook[] } {
  const services: Service[] = [];
  const hooks: Hook[] = [];
  const types = new Map<string, string>();
  for (const [file, path] of sources(sdkDir, pluginsDir)) {
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.forEach((line, i) => {
      const t = /^export interface (\w+)/.exec(line);
      if (t) types.set(t[1]!, summaryAbove(lines, i));
      const s = /^export const (\w+) = createServiceRef<(\w+)(, true)?>\('([^']+)'/.exec(line);
      if (s) services.push({ ref: s[1]!, type: s[2]!, many: !!s[3], id: s[4]!, file, about: summaryAbove(lines, i) });
      const h = /^export const (\w+) = createHooksRef\('([^']+)'/.exec(line);
      if (!h) return;
      for (let k = i + 1; k < lines.length && !lines[k]!.startsWith('}))'); k++) {
        const m = /^\s+(\w+): new (\w+)<\[([^\]]*)\]/.exec(lines[k]!);
        if (m) hooks.push({ ref: h[1]!, owner: h[2]!, name: m[1]!, kind: KINDS[m[2]!] ?? m[2]!, args: m[3]!, file, about: summaryAbove(lines, k) || summaryAbove(lines, i) });
      }
    });
  }
  // a ref documented by its example alone is described by its service type
  for (const s of services) s.about ||= types.get(s.type) ?? '';
  return { services, hooks };
}

/** The catalogue as markdown (without the markers). */
export function catalogue(sdkDir?: string): string {
  const { services, hooks } = scan(sdkDir);
  const out = [
    '### Services', '',
    'Declare a ref in `deps` to get the service; `provides` + `ctx.provide(ref, impl)` to offer one. "many" refs collect every provider in a list.', '',
    '| ref | id | type | providers | file | what |', '|---|---|---|---|---|---|',
    ...services.map((s) => `| \`${s.ref}\` | \`${s.id}\` | \`${s.type}\` | ${s.many ? 'many' : 'one'} | \`${s.file}\` | ${s.about} |`),
    '', '### Hooks', '',
    'Tap with `ctx.hooks.tap(ref, name, fn)`; the tap is named after your plugin.', '',
    '| hook | kind | arguments | file | what |', '|---|---|---|---|---|',
    ...hooks.map((h) => `| \`${h.ref}\` \`${h.name}\` | ${h.kind} | \`${h.args.replace(/\|/g, '\\|')}\` | \`${h.file}\` | ${h.about} |`),
  ];
  return out.join('\n') + '\n';
}

/** `text` with the part between the markers replaced by the catalogue. */
export function withCatalogue(text: string, sdkDir?: string): string {
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`CONTRIBUTING.md needs the markers ${BEGIN} and ${END}`);
  return `${text.slice(0, a + BEGIN.length)}\n${catalogue(sdkDir)}${text.slice(b)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = join(ROOT, 'CONTRIBUTING.md');
  const text = readFileSync(file, 'utf8');
  if (process.argv.includes('--check')) {
    // the catalogue and the generated config data (scripts/config-data.ts) are both checked here
    const { stale } = await import('./config-data.ts');
    const bad = [...(withCatalogue(text) === text ? [] : ['CONTRIBUTING.md (run: node scripts/sdk-catalogue.ts)']), ...(await stale()).map((f) => `${f} (run: node scripts/config-data.ts)`)];
    if (bad.length) { console.error(`stale: ${bad.join(', ')}`); process.exit(1); }
    console.log('sdk catalogue and config data: up to date');
  } else writeFileSync(file, withCatalogue(text));
}
