// Writes sample-config/full.jsonc: every key of the configuration with its default, allowed values
// and environment variables, from the config schema (run: node scripts/sample-config.ts).
import { writeFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import '../app/install.ts';
import { Value } from '@sinclair/typebox/value';
import { starBuiltins } from '../core/kernel/loader.ts';
import { ConfigData } from '../app/config-data.ts';
import { ALIASES, envTable } from '../core/config/env.ts';
import { GENERATED } from '../core/config/generate.ts';
import { getPath } from '../core/config/schema-walk.ts';
import { CONFIG_FORMATS } from '../sdk/config/formats.ts';

type S = TSchema & { properties?: Record<string, S>; items?: S; anyOf?: S[]; const?: unknown; enum?: unknown[]; minimum?: number; maximum?: number; patternProperties?: unknown; format?: string };

const HEADER = `// Every key of the configuration, with its default, allowed values and environment variables.
// Generated from the config schema by \`node scripts/sample-config.ts\` (a test fails when it is stale).
// Copy it, change what you need and start with \`npm start -- --config <file>\`. Comments and trailing
// commas are accepted; the service writes the file back as plain JSON on first start (it adds the
// generated id, name and secrets), so keep this commented copy as the reference.
`;
/** What the schema does not describe itself (keys of the file rather than settings). */
const NOTES: Record<string, string> = {
  version: 'Layout version of the file; layouts 1 and 2 of older datarhei Core files are upgraded when read.',
  created_at: 'When the file was last written (RFC 3339).',
  plugins: 'The plugins to load; a plugin that is not listed has no code in the process (see CONTRIBUTING.md).',
};
const SET_BY_SERVICE: Record<string, string> = {
  created_at: 'set by the service when the file is written',
};

/** What a value of this schema may be, in words. */
export function allowed(s: S): string {
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(', ');
  if (s.anyOf) return s.anyOf.map(allowed).join(' or ');
  switch (s.type) {
    case 'boolean': return 'true or false';
    case 'integer':
    case 'number': {
      const range = [s.minimum !== undefined ? `>= ${s.minimum}` : '', s.maximum !== undefined ? `<= ${s.maximum}` : ''].filter(Boolean).join(', ');
      return `${s.type === 'integer' ? 'an integer' : 'a number'}${range ? ` ${range}` : ''}`;
    }
    case 'string': return (s.format ? (CONFIG_FORMATS as Record<string, { expected: string }>)[s.format]?.expected : undefined) ?? 'a string';
    case 'array': return s.items?.format ? `a list, each ${allowed(s.items)}` : `a list of ${s.items?.type === 'object' ? `objects {${Object.keys(s.items.properties ?? {}).join(', ')}}` : `${allowed(s.items ?? ({} as S)).replace(/^an? /, '')}s`}`;
    case 'object': return s.patternProperties ? 'an object of string values' : 'an object';
    default: return 'any value';
  }
}

function leafLines(path: string, key: string, s: S, defaults: unknown, env: Map<string, string[]>, pad: string): string[] {
  const lines: string[] = [];
  const about = s.description ?? NOTES[path];
  if (about) lines.push(`${pad}// ${about}`);
  const facts: string[] = [];
  if (path in GENERATED) facts.push('default: generated on first start when missing');
  else if (SET_BY_SERVICE[path]) facts.push(SET_BY_SERVICE[path]!);
  else facts.push(`default: ${JSON.stringify(getPath(defaults, path))}`);
  if (path === 'plugins') facts.push(`allowed: a list of built-in names (${starBuiltins().join(', ')}), "*" for all of this build, package names, module paths, or {"name"|"module", "config"} objects`);
  else if (path === 'version') facts.push('allowed: 3 (1 and 2 are upgraded)');
  else facts.push(`allowed: ${allowed(s)}`);
  const names = env.get(path);
  if (names?.length) facts.push(`env: ${names.join(', ')}`);
  lines.push(`${pad}// ${facts.join(' · ')}`);
  const value = `"${key}": ${JSON.stringify(getPath(defaults, path))},`;
  lines.push(path in GENERATED || SET_BY_SERVICE[path] ? `${pad}// ${value}` : `${pad}${value}`);
  return lines;
}

function objectLines(s: S, prefix: string, defaults: unknown, env: Map<string, string[]>, depth: number): string[] {
  const pad = '  '.repeat(depth);
  const lines: string[] = [];
  for (const [key, sub] of Object.entries(s.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    const alias = ALIASES.find(([, a]) => a === path);
    if (alias) {
      lines.push(`${pad}// "${key}": the same settings as "${alias[0].split('.').pop()}" (an alias kept identical by the service; set either)`);
      continue;
    }
    if (sub.type === 'object' && sub.properties) {
      lines.push(`${pad}"${key}": {`, ...objectLines(sub, path, defaults, env, depth + 1), `${pad}},`);
    } else {
      lines.push(...leafLines(path, key, sub, defaults, env, pad));
    }
  }
  return lines;
}

/** The text of sample-config/full.jsonc. */
export function fullSample(): string {
  const defaults = Value.Default(ConfigData, {});
  const env = new Map(envTable().map(({ path, spec }) => [path, spec.names]));
  return `${HEADER}{\n${objectLines(ConfigData as S, '', defaults, env, 1).join('\n')}\n}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(new URL('../sample-config/full.jsonc', import.meta.url), fullSample());
}
