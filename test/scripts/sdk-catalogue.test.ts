import t from 'tap';
import { readFileSync } from 'node:fs';
import { catalogue, scan, withCatalogue, BEGIN, END } from '../../scripts/sdk-catalogue.ts';

const contributing = () => readFileSync(new URL('../../CONTRIBUTING.md', import.meta.url), 'utf8');

t.test('CONTRIBUTING.md carries the current catalogue of SDK services and hooks', async (t) => {
  const text = contributing();
  t.equal(text, withCatalogue(text), 'regenerate with: node scripts/sdk-catalogue.ts');
  t.ok(text.includes(`${BEGIN}\n${catalogue()}${END}`));
});

t.test('the catalogue finds every ref, with its kind and its JSDoc', async (t) => {
  const { services, hooks } = scan();
  const refs = services.map((s) => s.ref);
  for (const r of ['filesystemsRef', 'processesRef', 'sessionsRef', 'metricCollectorsRef', 'placeholdersRef']) t.ok(refs.includes(r), r);
  t.ok(services.every((s) => s.about !== ''), 'every service is described');
  const pre = hooks.find((h) => h.ref === 'ingestHooksRef' && h.name === 'prePublish');
  t.match(pre, { kind: /^veto/, args: 'IngestPeer', about: /refusal wins/ });
  t.throws(() => withCatalogue('no markers'), /needs the markers/);
});
