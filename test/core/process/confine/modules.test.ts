import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';

/*
 * Issue 43.1 at the API: filters that load a library (ladspa, lv2, frei0r, frei0r_src) are refused
 * at create with 400 naming the filter, as are options that read a filtergraph from a file; with a
 * module folder in the config file (encoder.confinement.modules) they load from there only.
 */

const IN = { id: 'in', address: 'anullsrc=d=0.3', options: ['-f', 'lavfi'] };
const out = (options: string[]) => ({ id: 'out', address: '-', options: [...options, '-f', 'null'] });

async function site(t: { teardown(fn: () => unknown): void }, modules: boolean) {
  const dir = await mkdtemp(join(tmpdir(), 'core-modules-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  for (const d of ['disk', 'db', 'modules']) mkdirSync(join(dir, d));
  const config = {
    address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } }, log: { level: 'info' },
    update_check: false, http: { threads: 0 }, encoder: { confinement: modules ? { modules: join(dir, 'modules') } : {} },
  };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  return { dir, app: await startApp(t, { dir }) };
}

t.test('without a module folder every module filter and filter script is refused at create', async (t) => {
  const { dir, app } = await site(t, false);
  // a library uploaded through the API, as the attack did
  t.equal((await app.request('PUT', '/api/v3/fs/disk/x.so', { raw: Buffer.from('\x7fELF'), headers: { 'content-type': 'application/octet-stream' } })).status, 201);
  const cases: Array<[string, Record<string, unknown>]> = [
    ['ladspa', { output: [out(['-af', `ladspa=file=${join(dir, 'disk', 'x.so')}:plugin=x`])] }],
    ['ladspa', { output: [out(['-filter_complex', `[0:a]volume=1,l\\adspa@a=f=${join(dir, 'disk', 'x.so')}[o]`, '-map', '[o]'])] }],
    ['lv2', { output: [out(['-af', 'lv2=p=http://example.org/plugin'])] }],
    ['frei0r', { output: [out(['-vf', `frei0r=filter_name=${join(dir, 'disk', 'x.so')}`])] }],
    ['frei0r_src', { input: [{ id: 'in', address: `frei0r_src=size=64x48:filter_name=${join(dir, 'disk', 'x.so')}`, options: ['-f', 'lavfi'] }] }],
    ['-filter_complex_script', { output: [out(['-filter_complex_script', join(dir, 'disk', 'graph.txt')])] }],
    ['-filter_script:a', { output: [out(['-filter_script:a', join(dir, 'disk', 'graph.txt')])] }],
    // the lavfi device reads its graph from a file too (a probe loaded a library through it)
    ['-graph_file', { input: [{ id: 'in', address: 'dummy', options: ['-f', 'lavfi', '-graph_file', join(dir, 'disk', 'graph.txt')] }] }],
  ];
  let n = 0;
  for (const [name, body] of cases) {
    const r = await app.request('POST', '/api/v3/process', { body: { id: `m${n++}`, input: [IN], output: [out([])], autostart: false, ...body } });
    t.equal(r.status, 400, `${name}: 400`);
    t.equal(r.body.message, 'Invalid process config');
    t.match(String(r.body.details), name, `the detail names ${name}`);
  }
  t.same((await app.request('GET', '/api/v3/process')).body, [], 'nothing stored');
  // the same refusal on a PUT of a stored process
  t.equal((await app.request('POST', '/api/v3/process', { body: { id: 'ok', input: [IN], output: [out(['-af', 'volume=1'])], autostart: false } })).status, 200);
  const put = await app.request('PUT', '/api/v3/process/ok', { body: { id: 'ok', input: [IN], output: [out(['-af', 'ladspa=file=x.so'])] } });
  t.equal(put.status, 400);
  t.match(String(put.body.details), 'ladspa');
});

t.test('with a module folder they load from there, and only from there', { skip: spawnSync('gcc', ['--version']).status !== 0 && 'no C compiler' }, async (t) => {
  const { dir, app } = await site(t, true);
  const ran = join(dir, 'disk', 'module-ran');
  writeFileSync(join(dir, 'm.c'), `#include <stdio.h>
__attribute__((constructor)) static void ran(void) { FILE *f = fopen("${ran}", "w"); if (f) { fputs("ran\\n", f); fclose(f); } }
`);
  t.equal(spawnSync('gcc', ['-shared', '-fPIC', '-o', join(dir, 'modules', 'm.so'), join(dir, 'm.c')]).status, 0);
  const outside = await app.request('POST', '/api/v3/process', { body: { id: 'out', input: [IN], output: [out(['-af', `ladspa=file=${join(dir, 'disk', 'm.so')}:plugin=x`])] } });
  t.equal(outside.status, 400, 'a module path outside the folder: 400');
  t.match(String(outside.body.details), /module folder/);
  const inside = await app.request('POST', '/api/v3/process', { body: { id: 'in', input: [IN], output: [out(['-af', `ladspa=file=${join(dir, 'modules', 'm.so')}:plugin=x`])], reconnect: false } });
  t.equal(inside.status, 200, 'a module of the folder: accepted');
  // by name: found through LADSPA_PATH, the module folder
  const byName = await app.request('POST', '/api/v3/process', { body: { id: 'name', input: [IN], output: [out(['-af', 'ladspa=file=m:plugin=x'])], reconnect: false, autostart: false } });
  t.equal(byName.status, 200, 'a module by name: accepted');
  await waitFor(() => existsSync(ran), { what: 'the operator\'s module loaded by the confined ffmpeg' });
  t.pass('loaded');
});
