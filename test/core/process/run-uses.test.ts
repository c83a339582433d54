import t from 'tap';
import { join } from 'node:path';
import { fileUses } from '../../../core/process/run-uses.ts';
import type { Resolution } from '../../../core/process/command.ts';

/*
 * What a command names on the file mounts, for its maker's policies (issue 49): the disk's folder
 * however a path to it is spelled (absolute, behind a protocol prefix, relative to the working
 * directory the child shares), and beside a playlist what its credential reaches.
 */

const root = join(process.cwd(), 'run-uses-data');
const mounts = [{ root, mount: '/' }];
const io = (address: string, options: string[] = []) => ({ id: 'x', address, options, cleanup: [] });
const uses = (r: Partial<Resolution>) => fileUses({ options: [], inputs: [], outputs: [], cleanup: [], command: [], ...r } as Resolution, 'T'.repeat(32), mounts)
  .map((u) => `${u.action} ${u.resource}`);

t.test('the disk\'s folder, however spelled', async (t) => {
  t.same(uses({ outputs: [io('-', ['-hls_segment_filename', 'run-uses-data/bob/s_%03d.ts'])] }), ['PUT /bob/s_%03d.ts'], 'relative to the working directory');
  t.same(uses({ outputs: [io('-', ['-hls_segment_filename', './run-uses-data/bob/s.ts'])] }), ['PUT /bob/s.ts']);
  t.same(uses({ outputs: [io(`tee:${root}/bob/a.ts`)] }), ['PUT /bob/a.ts'], 'behind tee:');
  t.same(uses({ outputs: [io(`crypto:file:${root}/bob/a.ts`)] }), ['PUT /bob/a.ts'], 'behind nested prefixes');
  t.same(uses({ options: ['-progress', `file:${root}/bob/p.txt`] }), ['PUT /bob/p.txt'], 'a global option');
  t.same(uses({ inputs: [io(`concat:${root}/bob/a.ts|${root}/alice/b.ts`)] }), ['GET /bob/a.ts', 'GET /alice/b.ts'], 'every part of a concat');
  t.same(uses({ outputs: [io('-', ['-metadata', 'title=metadata/run-uses-datax/y'])] }), [], 'no path where none starts');
  t.same(uses({ outputs: [io('-', ['-f', 'null'])] }), []);
  t.same(uses({ outputs: [io('-', ['-hls_segment_filename', root.replace('/run-uses-data', '//run-uses-data') + '/bob/s_%d.ts'])] }), ['PUT /bob/s_%d.ts'], 'a doubled slash');
  t.same(uses({ options: ['-progress', `${process.cwd()}/./run-uses-data/bob/p.txt`] }), ['PUT /bob/p.txt'], 'a /./');
  t.ok(uses({ outputs: [io('tee:/proc/self/cwd/../run-uses-data/bob/t.ts')] }).includes('PUT /proc/self/cwd/../run-uses-data/bob/t.ts'), 'a path through /proc: named as it is (no mount\'s policy names it)');
  t.same(uses({ inputs: [io('/dev/fd/3')] }), ['GET /dev/fd/3']);
  t.same(uses({ inputs: [io(`${root}/alice/pl.m3u8`, ['-protocol_whitelist', 'file,http'])] }), ['GET /**', 'GET /alice/pl.m3u8'], 'a widened protocol list reads every file');
  t.same(uses({ inputs: [io(`${root}/alice/l.txt`, ['-f', 'concat', '-safe', '0'])] }), ['GET /**', 'GET /alice/l.txt'], 'an unsafe concat list too');
  t.same(uses({ inputs: [io(`${root}/alice/l.txt`, ['-f', 'concat', '-safe', '1'])] }), ['GET /alice/l.txt']);
});

t.test('beside a playlist: its folder\'s files to write, its folder to read', async (t) => {
  const url = `http://process:p:${'T'.repeat(32)}@127.0.0.1:8080`;
  t.same(uses({ outputs: [io(`${url}/memfs/a/x.m3u8`)] }), ['PUT /memfs/a/x.m3u8', 'PUT /memfs/a/*']);
  t.same(uses({ inputs: [io(`${url}/memfs/a/x.m3u8`)] }), ['GET /memfs/a/x.m3u8', 'GET /memfs/a/**']);
  t.same(uses({ inputs: [io(`${url}/memfs/a/../b/x.ts`)] }), ['GET /memfs/b/x.ts']);
});
