import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { sh } from './helpers.ts';
import { Children } from '../../../../core/process/confine/children.ts';
import { detectMechanism, type Mechanism } from '../../../../core/process/confine/mechanism.ts';

/*
 * Issue 43.1, 43.2 (links) and 43.5 (root's files), in-process through the children service: a
 * canary shared object whose constructor writes a file is placed in every folder a child may write
 * (the disk root, a folder of encoder.confinement.writable, the child's own TMPDIR) and named by
 * ffmpeg's ladspa filter: it never runs. Without the namespaces (the mechanism Landlock alone had)
 * the same canary runs, so the test sees what it guards against.
 */

const mechanism = detectMechanism();
const gcc = spawnSync('gcc', ['--version']).status === 0;
const skip = mechanism.mechanism !== 'landlock' ? 'no Landlock here' : !mechanism.ns ? 'no namespaces can be entered here' : !gcc ? 'no C compiler (gcc) to build the canary' : false;

function place(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'core-seams-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const d of ['disk', 'db', 'rec']) mkdirSync(join(dir, d));
  for (const d of [dir, join(dir, 'disk'), join(dir, 'db'), join(dir, 'rec')]) chmodSync(d, 0o777);
  return dir;
}

/** A shared object whose constructor writes `ran` to the file named by $CANARY_OUT (or a fixed path). */
function canary(dir: string, out: string): string {
  const src = join(dir, 'canary.c');
  writeFileSync(src, `#include <stdio.h>
__attribute__((constructor)) static void ran(void) { FILE *f = fopen(${JSON.stringify(out)}, "w"); if (f) { fputs("ran\\n", f); fclose(f); } }
`);
  const so = join(dir, 'canary.so');
  const r = spawnSync('gcc', ['-shared', '-fPIC', '-o', so, src], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gcc: ${r.stderr}`);
  return so;
}

const ladspa = (so: string) => `ffmpeg -nostdin -hide_banner -loglevel error -f lavfi -i anullsrc=d=0.2 -af ladspa=file=${so}:plugin=x -f null - ; true`;

function make(dir: string, m: Mechanism): Children {
  return new Children({
    mechanism: m, require: true, hidden: [join(dir, 'db')], writable: [join(dir, 'disk'), join(dir, 'rec')], tmpBase: join(dir, 'db', 'run', 'tmp'),
  });
}

t.test('a library in any folder a child writes is never loaded as code', { skip }, async (t) => {
  const dir = place(t);
  const ran = join(dir, 'disk', 'canary-ran');
  const so = canary(dir, ran);
  const children = make(dir, mechanism);
  for (const folder of ['disk', 'rec']) {
    const placed = join(dir, folder, 'x.so');
    writeFileSync(placed, readFileSync(so));
    const r = await sh(children, ladspa(placed));
    t.notOk(existsSync(ran), `not run from the ${folder} folder (${r.out.trim().split('\n').at(-1)})`);
  }
  // the child's own temporary folder: it copies the library there itself
  const r = await sh(children, `cp ${so} "$TMPDIR/x.so" && ${ladspa('"$TMPDIR/x.so"')}`);
  t.notOk(existsSync(ran), `not run from its TMPDIR (${r.out.trim().split('\n').at(-1)})`);
  // nor executed as a program
  writeFileSync(join(dir, 'disk', 'prog.sh'), '#!/bin/sh\necho escaped\n');
  chmodSync(join(dir, 'disk', 'prog.sh'), 0o755);
  t.notMatch((await sh(children, `${join(dir, 'disk', 'prog.sh')}`)).out, /escaped/, 'no program runs from the disk root');
});

t.test('the same canary runs where only Landlock confines (the test sees the load)', { skip }, async (t) => {
  const dir = place(t);
  const ran = join(dir, 'disk', 'canary-ran');
  const so = canary(dir, ran);
  const children = make(dir, { ...mechanism, ns: false });
  writeFileSync(join(dir, 'disk', 'x.so'), readFileSync(so));
  await sh(children, ladspa(join(dir, 'disk', 'x.so')));
  t.ok(existsSync(ran), 'loaded and ran');
});

t.test('a child makes no symbolic or hard link, in the roots or anywhere', { skip: mechanism.mechanism !== 'landlock' && 'no Landlock here' }, async (t) => {
  const dir = place(t);
  const children = make(dir, mechanism);
  writeFileSync(join(dir, 'disk', 'f'), 'x');
  const d = join(dir, 'disk');
  const r = await sh(children, `ln -s ${join(dir, 'db')} ${d}/sym; ln ${d}/f ${d}/hard; mkdir ${d}/sub && ln ${d}/f ${d}/sub/hard2; ln -s f ${d}/rel; echo done`);
  t.match(r.out, /done/);
  for (const n of ['sym', 'hard', 'sub/hard2', 'rel']) t.notOk(existsSync(join(d, n)), `no ${n}`);
  // renames inside a root still work (ffmpeg's HLS temp files)
  t.equal((await sh(children, `echo a > ${d}/a.tmp && mv ${d}/a.tmp ${d}/a.m3u8 && cat ${d}/a.m3u8`)).out.trim(), 'a');
});

t.test('running as root, a child cannot read what only root may read', { skip: process.getuid?.() !== 0 ? 'not root' : !existsSync('/etc/shadow') ? 'no /etc/shadow' : false }, async (t) => {
  const dir = place(t);
  // the hidden list the service builds (provide.ts) when it runs as root
  const { rootOnlyPaths } = await import('../../../../core/process/confine/root-only.ts');
  const hidden = rootOnlyPaths([join(dir, 'disk')]);
  t.ok(hidden.includes('/etc/shadow'), '/etc/shadow is root only');
  const children = new Children({ mechanism, require: true, hidden: [join(dir, 'db'), ...hidden], writable: [join(dir, 'disk')], tmpBase: join(dir, 'db', 'run', 'tmp') });
  const r = await sh(children, 'cat /etc/shadow | head -c 100; echo; cat /etc/hostname >/dev/null && echo readable');
  t.notMatch(r.out, /^root:/m, 'no line of /etc/shadow');
  t.match(r.out, /readable/, 'what others may read stays readable');
});
