// Writes app/config-data.ts (the whole configuration: the kernel's sections of the SDK with each
// built-in plugin's own schema at its `configKey`) and app/built-ins.ts (the built-in plugins of
// this build), from plugins/*/index.ts and schema.ts: the composition package's, never the core's
// (run: node scripts/config-data.ts; `--check` fails when a file is stale, and so does
// test/scripts/config-data.test.ts).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import { KernelConfig, type PluginDefinition } from '../sdk/index.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PLUGINS = join(ROOT, 'plugins');

/**
 * The order of keys the reference writes (layout 3): the config file, `GET /api/v3/config` and the
 * docs follow it. A plugin section it does not name goes before `plugins` (root) or last (nested).
 */
const LAYOUT: Record<string, readonly string[]> = {
  '': ['version', 'id', 'name', 'address', 'created_at', 'update_check', 'log', 'db', 'host', 'api', 'tls', 'storage', 'rtmp', 'srt',
    'encoder', 'ffmpeg', 'playout', 'debug', 'metrics', 'sessions', 'events', 'http', 'service', 'router', 'plugins'],
  storage: ['mimetypes_file', 'disk', 'memory', 's3', 'cors'],
};
/** The order `"*"` mounts the built-ins in (ties of the plugin graph); a folder not named here comes after, by name. */
const MOUNT_ORDER = ['auth', 'idp-login', 'disk-fs', 'memfs', 'rtmp', 'srt', 'sessions', 'metrics', 'playout', 'widget', 'graphql', 'events'];
/** Built-ins `"*"` leaves out: `cluster` joins other nodes over NATS, which a single node must never do by accident. */
const OPT_IN = ['cluster'];

type S = TSchema & { properties?: Record<string, S> };
interface Builtin { folder: string; def: PluginDefinition; schemaName?: string; ident: string }

const ident = (folder: string) => folder.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

async function builtins(): Promise<Builtin[]> {
  const folders = readdirSync(PLUGINS, { withFileTypes: true }).filter((d) => d.isDirectory() && existsSync(join(PLUGINS, d.name, 'index.ts'))).map((d) => d.name);
  const rank = (f: string) => (MOUNT_ORDER.includes(f) ? MOUNT_ORDER.indexOf(f) : MOUNT_ORDER.length);
  folders.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const out: Builtin[] = [];
  for (const folder of folders) {
    const def = ((await import(pathToFileURL(join(PLUGINS, folder, 'index.ts')).href)) as { default: PluginDefinition }).default;
    if (def.name !== folder) throw new Error(`plugins/${folder}: the definition is named '${def.name}'`);
    let schemaName: string | undefined;
    if (def.configKey && def.configSchema) {
      const file = join(PLUGINS, folder, 'schema.ts');
      const mod = existsSync(file) ? (await import(pathToFileURL(file).href)) as Record<string, unknown> : {};
      schemaName = Object.keys(mod).find((k) => mod[k] === def.configSchema);
      if (!schemaName) throw new Error(`plugins/${folder}: the schema of '${def.configKey}' must be exported from its schema.ts`);
    }
    out.push({ folder, def, schemaName, ident: ident(folder) });
  }
  return out;
}

/** Non-structural options of an object schema (default, description), as source. */
function options(s: S): string {
  const o = Object.fromEntries(Object.entries(s).filter(([k]) => !['type', 'properties', 'required'].includes(k)));
  return `{ ${Object.entries(o).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')} }`;
}

/** Source of the object at `path` ('' = the root): kernel keys by reference, plugin sections by their schema. */
function emit(path: string, kernel: S | undefined, owned: Map<string, string>, depth: number): string[] {
  const pad = '  '.repeat(depth);
  const prefix = path ? `${path}.` : '';
  const kernelKeys = Object.keys(kernel?.properties ?? {});
  const pluginKeys = [...owned.keys()].filter((k) => k.startsWith(prefix) && k !== path).map((k) => k.slice(prefix.length).split('.')[0]!);
  const layout = LAYOUT[path] ?? [];
  const keys = [...new Set([...layout.filter((k) => kernelKeys.includes(k) || pluginKeys.includes(k)), ...kernelKeys, ...pluginKeys])];
  if (path === '' && keys.includes('plugins')) keys.push(keys.splice(keys.indexOf('plugins'), 1)[0]!);
  const lines: string[] = [];
  const ref = (p: string) => `K${p.split('.').map((k, i) => (i === 0 ? `.${k}` : `.properties.${k}`)).join('')}`;
  for (const key of keys) {
    const full = prefix + key;
    const below = [...owned.keys()].some((k) => k.startsWith(`${full}.`));
    if (owned.has(full)) lines.push(`${pad}${key}: ${owned.get(full)},`);
    else if (below) {
      const sub = kernel?.properties?.[key];
      lines.push(`${pad}${key}: Type.Object({`, ...emit(full, sub, owned, depth + 1), `${pad}}${sub ? `, ${options(sub)}` : ', { default: {} }'}),`);
    } else lines.push(`${pad}${key}: ${ref(full)},`);
  }
  return lines;
}

const HEAD = (what: string) => `// Generated by \`node scripts/config-data.ts\` from ${what}.
// Do not edit (test/scripts/config-data.test.ts fails when it is stale).\n`;

export async function generate(): Promise<{ configData: string; builtIns: string }> {
  const list = await builtins();
  const owned = new Map(list.filter((b) => b.schemaName).map((b) => [b.def.configKey!, `${b.ident}Schema`]));
  const configData = `${HEAD('the kernel\'s sections (sdk/config) and the built-in plugins\' schemas (plugins/<name>/schema.ts)')}import { Type, type Static } from '@sinclair/typebox';
import { KernelConfig } from '../sdk/config/index.ts';
${list.filter((b) => b.schemaName).map((b) => `import { ${b.schemaName} as ${b.ident}Schema } from '../plugins/${b.folder}/schema.ts';`).join('\n')}

const K = KernelConfig.properties;

/**
 * The whole configuration, layout version 3 of the reference (section 6.2) plus \`plugins\`: the
 * kernel's sections with every built-in's section at its \`configKey\`. Every section is here, loaded
 * or not, so that \`GET /api/v3/config\` shows every key and clients may PUT any section.
 */
export const ConfigData = Type.Object({
${emit('', KernelConfig as S, owned, 1).join('\n')}
});
export type ConfigData = Static<typeof ConfigData>;
type AppSections = Static<typeof ConfigData>;

declare module '../core/config/config-data.ts' {
  /** This build's sections: code compiled with the app sees the core's \`ConfigData\` with them. */
  interface BuildSections extends AppSections {}
}
`;
  const builtIns = `${HEAD('plugins/*/index.ts')}import type { PluginDefinition } from '../sdk/index.ts';
import type { BuiltinPlugin } from '../core/config/build.ts';
${list.map((b) => `import ${b.ident} from '../plugins/${b.folder}/index.ts';`).join('\n')}

/** The built-in plugins of this build, in the order \`"*"\` mounts them (ties of the plugin graph). */
export const BUILTINS: readonly BuiltinPlugin[] = [
${list.map((b) => `  { def: ${b.ident} as PluginDefinition, optIn: ${OPT_IN.includes(b.folder)} },`).join('\n')}
];
`;
  return { configData, builtIns };
}

const FILES = { configData: join(ROOT, 'app/config-data.ts'), builtIns: join(ROOT, 'app/built-ins.ts') };

/** The generated files that differ from what is committed. */
export async function stale(): Promise<string[]> {
  const out = await generate();
  return (Object.keys(FILES) as (keyof typeof FILES)[]).filter((k) => !existsSync(FILES[k]) || readFileSync(FILES[k], 'utf8') !== out[k]).map((k) => FILES[k]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--check')) {
    const bad = await stale();
    if (bad.length) { console.error(`stale (run: node scripts/config-data.ts): ${bad.join(', ')}`); process.exit(1); }
    console.log('config-data: up to date');
  } else {
    const out = await generate();
    writeFileSync(FILES.configData, out.configData);
    writeFileSync(FILES.builtIns, out.builtIns);
  }
}
