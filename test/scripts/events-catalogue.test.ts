import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { BUILTIN_EVENT_TYPES } from '../../app/build.ts';
import { BEGIN, CONTRIBUTING, END, catalogue, withCatalogue } from '../../scripts/events-catalogue.ts';
import { startApp } from '../helpers/app.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...await sources(p));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

t.test('the event catalogue in CONTRIBUTING.md is up to date', async (t) => {
  const doc = await readFile(CONTRIBUTING, 'utf8');
  t.ok(doc.includes(`${BEGIN}\n${catalogue()}${END}`), 'regenerate with: node scripts/events-catalogue.ts');
  t.equal(withCatalogue(doc), doc);
  t.throws(() => withCatalogue('no markers'), /markers/);
});

t.test('every type emitted by name in core/ and plugins/ is declared; the service declares the catalogue', async (t) => {
  const declared = new Set(BUILTIN_EVENT_TYPES.map((s) => s.type));
  const emitted = new Set<string>();
  for (const dir of ['core', 'plugins']) {
    for (const file of await sources(join(ROOT, dir))) {
      // event types are dotted (`process.state`); a Node emitter's own events (`connection`) are not
      for (const m of (await readFile(file, 'utf8')).matchAll(/\bemit\('([a-z0-9_]+\.[a-z0-9_.]+)'/g)) emitted.add(m[1]!);
    }
  }
  t.ok(emitted.size >= 10, `found the emit calls (${emitted.size})`);
  for (const type of emitted) t.ok(declared.has(type), `${type} is declared by its emitter`);
  const app = await startApp(t);
  const types = (await app.request('GET', '/api/v3/events/types')).body as { type: string }[];
  t.same(types.map((s) => s.type), [...declared]);
});
