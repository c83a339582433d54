// Prints the key table of sample-config/README.md from the config schema (descriptions included) (run: node scripts/config-docs.ts).
import { Value } from '@sinclair/typebox/value';
import { ConfigData } from '../core/config/config-data.ts';
import { envTable } from '../core/config/env.ts';
import { getPath, schemaAt } from '../core/config/schema-walk.ts';
import { GENERATED } from '../core/config/generate.ts';

export function configTable(): string {
  const defaults = Value.Default(ConfigData, {});
  const rows = ['| key | default | environment | meaning |', '|---|---|---|---|'];
  for (const { path, spec } of envTable()) {
    const def = path in GENERATED ? '(generated)' : JSON.stringify(getPath(defaults, path));
    const env = spec.names.map((n) => `\`${n}\``).join(', ') + (spec.sep !== ',' ? ` (list separator \`${spec.sep}\`)` : '');
    rows.push(`| \`${path}\` | \`${def}\` | ${env} | ${schemaAt(ConfigData, path)?.description ?? ''} |`);
  }
  return rows.join('\n') + '\n';
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(configTable());
