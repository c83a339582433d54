import t from 'tap';
import { resolveProcess } from '../../../core/process/command.ts';
import { normalize } from '../../../core/process/config-model.ts';
import { Placeholders } from '../../../core/process/placeholder-registry.ts';
import { ResolveMemo, engineResolver } from '../../../core/process/resolve-memo.ts';
import { accessList } from '../../../core/process/validate.ts';
import type { FullConfig } from '../../../core/process/config-model.ts';

/*
 * Issue 46.4: a process's shown command was resolved at restore and again for the first list
 * after the service listened, for every stored process. The second resolution is now the first
 * one's result while nothing it read changed: each placeholder looked up, each value given, each
 * process referenced; anything else resolves afresh.
 */

const validator = { input: accessList({ allow: [], block: [] }, 'i'), output: accessList({ allow: [], block: [] }, 'o'), diskRoot: '/mnt/diskfs' };

function setup() {
  let port = 0;
  const registry = new Placeholders();
  registry.register({ name: 'memfs', contexts: ['address', 'options'], value: () => `http://127.0.0.1:${port}/memfs` });
  const configs = new Map<string, FullConfig>();
  let calls = 0;
  const memo = new ResolveMemo(registry, (id) => configs.get(id), (c, reads, lookup) => {
    calls++;
    return resolveProcess(c, { registry: reads, validator, lookup });
  });
  const add = (body: Record<string, unknown>) => {
    const c = normalize(body);
    configs.set(c.id, c);
    return c;
  };
  return { registry, configs, memo, add, calls: () => calls, setPort: (p: number) => { port = p; } };
}

const io = (address: string) => ({ input: [{ id: 'in', address: 'testsrc', options: ['-f', 'lavfi'] }], output: [{ id: 'out', address, options: ['-f', 'hls'] }] });

t.test('the same result while every placeholder gives the same value; afresh when one changed', async (t) => {
  const s = setup();
  const c = s.add({ id: 'a', ...io('{memfs}/a.m3u8') });
  const first = s.memo.view(c);
  t.equal(s.memo.view(c), first, 'nothing changed: the same resolution');
  t.equal(s.calls(), 1, 'resolved once');
  s.setPort(8080);
  const second = s.memo.view(c);
  t.equal(s.calls(), 2, 'the value changed (the port became known): resolved again');
  t.match(second, { command: ['-f', 'lavfi', '-i', 'testsrc', '-f', 'hls', 'http://127.0.0.1:8080/memfs/a.m3u8'] });
  t.same(second, resolveProcess(c, { registry: s.registry, validator, lookup: () => undefined }), 'what a fresh resolution gives');
  const replaced = s.add({ id: 'a', ...io('{memfs}/b.m3u8') });
  s.memo.view(replaced);
  t.equal(s.calls(), 3, 'a new config (a PUT) resolves afresh');
});

t.test('a placeholder registered later, a referenced process changed, an invalid result: afresh', async (t) => {
  const s = setup();
  const c = s.add({ id: 'b', ...io('{later}/x') });
  t.match(s.memo.view(c), /later/, 'not registered: invalid');
  s.registry.register({ name: 'later', contexts: ['address'], value: () => '/mnt/diskfs/later' });
  t.match(s.memo.view(c), { outputs: [{ address: '/mnt/diskfs/later/x' }] }, 'registered since: resolved again');
  t.equal(s.calls(), 2);

  s.add({ id: 'src', ...io('{memfs}/src.m3u8') });
  const ref = s.add({ id: 'ref', input: [{ id: 'in', address: '#src:output=out', options: [] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] });
  s.memo.view(ref);
  s.memo.view(ref);
  t.equal(s.calls(), 3, 'a reference resolved once while its process is unchanged');
  s.add({ id: 'src', ...io('{memfs}/moved.m3u8') });
  t.match(s.memo.view(ref), { inputs: [{ address: 'http://127.0.0.1:0/memfs/moved.m3u8' }] }, 'the referenced process changed: afresh');
  t.equal(s.calls(), 4);

  const bad = s.add({ id: 'bad', ...io('{memfs}/x.m3u8'), options: ['-filter_script', 'f.txt'] });
  t.type(s.memo.view(bad), 'string', 'invalid');
  t.type(s.memo.view(bad), 'string', 'still invalid');
  t.equal(s.calls(), 6, 'an invalid result is not kept');
});

t.test('the engine resolver: a run resolves afresh every time, with its credential', async (t) => {
  const registry = new Placeholders();
  const values: (string | undefined)[] = [];
  registry.register({ name: 'memfs', contexts: ['address'], value: (_s, run) => { values.push(run?.token); return `http://${run ? `u:${run.token}@` : ''}h/memfs`; } });
  const c = normalize({ id: 'c', ...io('{memfs}/c.m3u8') });
  const resolve = engineResolver(registry, validator, () => undefined);
  resolve(c);
  resolve(c);
  const run = resolve(c, { token: 't1' } as never);
  t.match(run, { outputs: [{ address: 'http://u:t1@h/memfs/c.m3u8' }] }, 'the run\'s credential');
  t.match(resolve(c), { outputs: [{ address: 'http://h/memfs/c.m3u8' }] }, 'a view carries none');
  t.same(values, [undefined, undefined, 't1', undefined], 'the view resolved once, checked twice; the run afresh');
});
