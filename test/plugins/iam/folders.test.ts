import t from 'tap';
import { fsFolders, grants, type FolderLister } from '../../../plugins/iam/folders.ts';

/* The paths a user's `fs` policies grant its processes' children (folders.ts), walked over the folders as they are: never the root for a pattern. */

const tree: Record<string, string[]> = {
  '/': ['alice/', 'alina/', 'bob/', 'top.txt', 'memfs/'],
  '/alice/': ['cam-1.mp4', 'cam-2.mp4', 'x.txt', 'sub/'],
  '/alina/': [], '/bob/': ['secret.ts'], '/memfs/': ['alice/'], '/memfs/alice/': [],
};
const list: FolderLister = (folder) => tree[folder];

t.test('a resource glob walked over the folders', async (t) => {
  for (const [glob, want] of [
    ['/alice/**', ['/alice/']], ['/alice/*.mp4', ['/alice/cam-1.mp4', '/alice/cam-2.mp4']], ['/ali*/**', ['/alice/', '/alina/']],
    ['/alic?/**', ['/alice/']], ['/[a]lice/**', ['/alice/']], ['/{alice}/**', ['/alice/']], ['/{alice,bob}/**', ['/alice/', '/bob/']],
    ['/alice/cam-1.mp4', ['/alice/cam-1.mp4']], ['/alice/', ['/alice/']], ['/**', ['/']], ['/**/x.txt', ['/']], ['/*/sub/**', ['/alice/sub/', '/alina/sub/', '/bob/sub/', '/memfs/sub/']],
    ['/ali*', ['/alice/', '/alina/']], ['/nobody*/**', []], ['/memfs/alice/**', ['/memfs/alice/']],
    ['/alice/../bob/**', []], ['/alice/./x', []], ['//bob/**', []], ['/{alice,x/y}/**', []], ['alice/**', []], ['**', []],
  ] as const) t.same(grants(glob, list), want, `${glob} -> ${JSON.stringify(want)}`);
  t.same(grants('/*/**', list, 2), ['/alice/', '/alina/'], 'at most the bound');
});

t.test('read for GET, written for a write; other types, domains and $anon\'s writes left out', async (t) => {
  const out = fsFolders([
    { domain: '$none', types: ['fs'], resource: '/alice/**', actions: ['GET', 'PUT'] },
    { domain: '', types: ['FS'], resource: '/bob/**', actions: ['get'] },
    { domain: '$none', types: ['fs', 'api'], resource: '/alina/**', actions: ['POST'] },
    { domain: 'other', types: ['fs'], resource: '/elsewhere/**', actions: ['GET', 'PUT'] },
    { domain: '*', types: ['fs'], resource: '/memfs/alice/**', actions: ['*'] },
    { domain: '$none', types: ['process'], resource: '/not-fs/**', actions: ['GET'] },
  ], list, { read: [], write: [] });
  t.same(out, { read: ['/alice/', '/bob/', '/memfs/alice/'], write: ['/alice/', '/alina/', '/memfs/alice/'] });
  t.same(fsFolders([{ domain: '$none', types: ['fs'], resource: '/**', actions: ['GET', 'PUT'] }], list, { read: [], write: [] }, true), { read: ['/'], write: [] }, 'read only ($anon)');
});
