import t from 'tap';
import { fsFolders, literalBase } from '../../../plugins/iam/folders.ts';

/* The folders a user's `fs` policies grant its processes' children (folders.ts): never less than a policy allows. */

t.test('a resource glob\'s literal folder', async (t) => {
  for (const [glob, base] of [
    ['/alice/**', '/alice/'], ['/alice/*.mp4', '/alice/'], ['/alice*', '/'], ['/a/b/c?d/**', '/a/b/'], ['/a/{b,c}/**', '/a/'],
    ['/a/[bc]/x', '/a/'], ['/a/\\*/x', '/a/'], ['/alice/cam.mp4', '/alice/cam.mp4'], ['/**', '/'], ['**', '/'], ['/memfs/alice/**', '/memfs/alice/'],
  ] as const) t.equal(literalBase(glob), base, `${glob} -> ${base}`);
});

t.test('read for GET, written for a write; other types, domains and $anon\'s writes left out', async (t) => {
  const out = fsFolders([
    { domain: '$none', types: ['fs'], resource: '/alice/**', actions: ['GET', 'PUT'] },
    { domain: '', types: ['fs'], resource: '/shared/**', actions: ['get'] },
    { domain: '$none', types: ['fs', 'api'], resource: '/drop/**', actions: ['POST'] },
    { domain: '$none', types: ['fs'], resource: '/all/**', actions: ['*'] },
    { domain: 'other', types: ['fs'], resource: '/elsewhere/**', actions: ['GET', 'PUT'] },
    { domain: '*', types: ['fs'], resource: '/any-domain/**', actions: ['GET'] },
    { domain: '$none', types: ['process'], resource: '/not-fs/**', actions: ['GET'] },
  ], { read: [], write: [] });
  t.same(out, { read: ['/alice/', '/shared/', '/all/', '/any-domain/'], write: ['/alice/', '/drop/', '/all/'] });
  t.same(fsFolders([{ domain: '$none', types: ['fs'], resource: '/**', actions: ['GET', 'PUT'] }], { read: [], write: [] }, true), { read: ['/'], write: [] }, 'read only ($anon)');
});
