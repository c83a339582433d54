import t from 'tap';
import { readFile } from 'node:fs/promises';
import { configTable } from '../../../scripts/config-docs.ts';
import { envTable } from '../../../core/config/env.ts';
import { ConfigData } from '../../../app/config-data.ts';
import { schemaAt } from '../../../core/config/schema-walk.ts';

t.test('sample-config/README.md documents every key with its default and variable', async (t) => {
  const readme = await readFile(new URL('../../../sample-config/README.md', import.meta.url), 'utf8');
  t.ok(readme.includes(configTable()), 'regenerate with: node scripts/config-docs.ts');
  // descriptions live in the section schemas the owners contribute
  for (const { path } of envTable()) t.ok(schemaAt(ConfigData, path)?.description, `${path} has a description in its schema`);
});
