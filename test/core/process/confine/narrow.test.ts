import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { sh } from './helpers.ts';
import { Children } from '../../../../core/process/confine/children.ts';
import { detectMechanism } from '../../../../core/process/confine/mechanism.ts';

/*
 * `ChildSpawnOptions.disk` (a user's process: its maker's folders): of the disk root the child
 * reads only the folders to read, writes only the folders to write (made when missing), and
 * nothing else there, by the kernel; the root stays noexec as a whole, granted folders included.
 * Without the option the child reaches all of the root, as before.
 */

const mechanism = detectMechanism();
const gcc = spawnSync('gcc', ['--version']).status === 0;
const skip = mechanism.mechanism !== 'landlock' ? 'no Landlock here' : false;

function site(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'core-narrow-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const d of ['disk/bob', 'disk/shared', 'db', 'rec']) mkdirSync(join(dir, d), { recursive: true });
  for (const d of [dir, join(dir, 'disk'), join(dir, 'db'), join(dir, 'rec')]) chmodSync(d, 0o777);
  writeFileSync(join(dir, 'disk', 'bob', 'secret.txt'), 'bob only\n');
  writeFileSync(join(dir, 'disk', 'shared', 'notice.txt'), 'for all\n');
  writeFileSync(join(dir, 'disk', 'top.txt'), 'at the root\n');
  const children = new Children({ mechanism, require: true, hidden: [join(dir, 'db')], writable: [join(dir, 'disk'), join(dir, 'rec')], tmpBase: join(dir, 'db', 'run', 'tmp') });
  return { dir, disk: join(dir, 'disk'), children };
}

t.test('a narrowed child reads and writes only its folders of the disk root', { skip }, async (t) => {
  const { dir, disk, children } = site(t);
  const narrow = { disk: { read: [`${disk}/shared/`], write: [`${disk}/alice/`] } };
  const r = await sh(children, [
    `cat ${disk}/bob/secret.txt || echo NO-BOB`, `cat ${disk}/top.txt || echo NO-TOP`, `ls ${disk} || echo NO-LIST`,
    `cat ${disk}/shared/notice.txt`, `echo mine > ${disk}/alice/mine.txt && cat ${disk}/alice/mine.txt`,
    `echo x > ${disk}/shared/w.txt || echo NO-SHARED-WRITE`, `echo x > ${disk}/new.txt || echo NO-ROOT-WRITE`,
    `echo rec > ${dir}/rec/r.txt && echo REC-OK`,
  ].join('; '), narrow);
  t.notMatch(r.out, /bob only/, 'another\'s folder: not read');
  t.match(r.out, /NO-BOB/);
  t.match(r.out, /NO-TOP/, 'a file of the root itself: not read');
  t.match(r.out, /NO-LIST/, 'the root: not listed');
  t.match(r.out, /for all/, 'a folder to read: read');
  t.match(r.out, /mine/, 'its folder to write: made, written and read');
  t.match(r.out, /NO-SHARED-WRITE/, 'a folder to read: not written');
  t.match(r.out, /NO-ROOT-WRITE/, 'the root: not written');
  t.notOk(existsSync(join(disk, 'new.txt')));
  t.match(r.out, /REC-OK/, 'the operator\'s writable folders as before');
  // without the option, all of the root as before
  const all = await sh(children, `cat ${disk}/bob/secret.txt; echo y > ${disk}/new.txt && echo ROOT-WRITE`);
  t.match(all.out, /bob only/);
  t.match(all.out, /ROOT-WRITE/);
  // the root to write: no narrowing; outside the root: dropped
  const root = await sh(children, `cat ${disk}/bob/secret.txt`, { disk: { read: ['/etc/'], write: [`${disk}/`] } });
  t.match(root.out, /bob only/, 'the root itself to write grants all of it');
  const outside = await sh(children, `cat ${disk}/top.txt || echo NO-TOP; echo z > ${dir}/rec/z.txt && echo REC-OK`, { disk: { read: [], write: [`${dir}/rec/`, `${disk}/../rec/`] } });
  t.match(outside.out, /NO-TOP/, 'a path outside the root grants nothing of it');
});

t.test('a narrowed root stays noexec: a library in its granted folder never loads', { skip: skip || (!mechanism.ns ? 'no namespaces can be entered here' : !gcc ? 'no C compiler' : false) }, async (t) => {
  const { dir, disk, children } = site(t);
  const ran = join(dir, 'rec', 'canary-ran');
  const src = join(dir, 'canary.c');
  writeFileSync(src, `#include <stdio.h>\n__attribute__((constructor)) static void ran(void) { FILE *f = fopen(${JSON.stringify(ran)}, "w"); if (f) { fputs("ran\\n", f); fclose(f); } }\n`);
  const so = join(dir, 'canary.so');
  t.equal(spawnSync('gcc', ['-shared', '-fPIC', '-o', so, src]).status, 0);
  for (const folder of ['alice', 'shared']) {
    mkdirSync(join(disk, folder), { recursive: true });
    writeFileSync(join(disk, folder, 'x.so'), readFileSync(so));
    const r = await sh(children, `ffmpeg -nostdin -hide_banner -loglevel error -f lavfi -i anullsrc=d=0.2 -af ladspa=file=${join(disk, folder, 'x.so')}:plugin=x -f null - ; true`,
      { disk: { read: [`${disk}/shared/`], write: [`${disk}/alice/`] } });
    t.notOk(existsSync(ran), `not run from its ${folder} folder (${r.out.trim().split('\n').at(-1)})`);
  }
});

t.test('folders to read are never run, folders to write only are not read', { skip }, async (t) => {
  const { dir, disk } = site(t);
  // without namespaces (Docker's default profile) only Landlock's rights keep a program there from running
  const children = new Children({ mechanism: { ...mechanism, ns: false }, require: true, hidden: [join(dir, 'db')], writable: [disk, join(dir, 'rec')], tmpBase: join(dir, 'db', 'run', 'tmp') });
  writeFileSync(join(disk, 'shared', 'prog.sh'), '#!/bin/sh\necho ESCAPED\n');
  chmodSync(join(disk, 'shared', 'prog.sh'), 0o755);
  writeFileSync(join(disk, 'bob', 'inbox.txt'), 'dropped before\n');
  const r = await sh(children, [`${disk}/shared/prog.sh || echo NO-RUN`, `cat ${disk}/shared/notice.txt`,
    `echo dropped > ${disk}/bob/new.txt && echo WROTE`, `cat ${disk}/bob/inbox.txt || echo NO-READ`].join('; '),
  { disk: { read: [`${disk}/shared/`], write: [`${disk}/bob/`] } });
  t.notMatch(r.out, /ESCAPED/, 'a program in a folder to read does not run');
  t.match(r.out, /NO-RUN/);
  t.match(r.out, /for all/, 'but is read');
  t.match(r.out, /WROTE/, 'a folder to write only: written');
  t.equal(readFileSync(join(disk, 'bob', 'new.txt'), 'utf8'), 'dropped\n');
  t.match(r.out, /NO-READ/, 'and not read');
});

t.test('an operator\'s writable folder holding the disk root does not give it back', { skip }, async (t) => {
  const { dir, disk } = site(t);
  const children = new Children({ mechanism, require: true, hidden: [join(dir, 'db')], writable: [disk, dir], tmpBase: join(dir, 'db', 'run', 'tmp') });
  const r = await sh(children, [`cat ${disk}/bob/secret.txt || echo NO-BOB`, `echo x > ${disk}/x.txt || echo NO-ROOT-WRITE`,
    `echo rec > ${dir}/rec/r.txt && echo REC-OK`, `echo top > ${dir}/top.txt || echo NO-NEW-TOP`].join('; '), { disk: { read: [], write: [`${disk}/alice/`] } });
  t.match(r.out, /NO-BOB/, 'another\'s folder: not read');
  t.match(r.out, /NO-ROOT-WRITE/, 'the root: not written');
  t.match(r.out, /REC-OK/, 'the rest of the operator\'s folder: written');
  t.match(r.out, /NO-NEW-TOP/, 'a new entry on the way to the root: not (the safe side)');
});
