// Prints the key table of sample-config/README.md from the config schema (descriptions included) (run: node scripts/config-docs.ts).
import '../app/install.ts';
import { Value } from '@sinclair/typebox/value';
import { ConfigData } from '../app/config-data.ts';
import { envTable } from '../core/config/env.ts';
import { getPath, schemaAt } from '../core/config/schema-walk.ts';
import { GENERATED } from '../core/config/generate.ts';
import { CONFIG_FORMATS } from '../sdk/config/formats.ts';

export function configTable(): string {
  const defaults = Value.Default(ConfigData, {});
  const rows = ['| key | default | environment | meaning |', '|---|---|---|---|'];
  for (const { path, spec } of envTable()) {
    const def = path in GENERATED ? '(generated)' : JSON.stringify(getPath(defaults, path));
    const env = spec.names.map((n) => `\`${n}\``).join(', ') + (spec.sep !== ',' ? ` (list separator \`${spec.sep}\`)` : '');
    const s = schemaAt(ConfigData, path) as { description?: string; format?: string; items?: { format?: string } } | undefined;
    rows.push(`| \`${path}\` | \`${def}\` | ${env} | ${[s?.description ?? '', formOf(s)].filter(Boolean).join(' ')} |`);
  }
  return rows.join('\n') + '\n';
}

/** The form a formatted key (or each item of a list) must have, as the 400 names it. */
function formOf(s: { format?: string; items?: { format?: string } } | undefined): string {
  const name = s?.format ?? s?.items?.format;
  const f = name ? (CONFIG_FORMATS as Record<string, { expected: string }>)[name] : undefined;
  if (!f) return '';
  return `${s?.items ? 'Each' : 'Form'}: ${f.expected}.`;
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(configTable());
