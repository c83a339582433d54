import t from 'tap';
import { createServiceRef, type AnyServiceRef } from '../../../sdk/index.ts';
import { orderPlugins } from '../../../core/kernel/graph.ts';

const a = createServiceRef<number>('a');
const b = createServiceRef<number>('b');
const many = createServiceRef<number, true>('many', { multiple: true });
const node = (name: string, deps: AnyServiceRef[] = [], provides: AnyServiceRef[] = []) => ({ name, deps, provides });

t.test('providers come before consumers, ties in config order', async (t) => {
  const order = orderPlugins([node('x', [a]), node('y'), node('p', [], [a]), node('m1', [], [many]), node('c', [many]), node('m2', [], [many])], new Set());
  t.same(order.map((n) => n.name), ['y', 'p', 'x', 'm1', 'm2', 'c']);
});

t.test('a missing provider names the plugin and the service', async (t) => {
  t.throws(() => orderPlugins([node('x', [a])], new Set()), /Plugin 'x' needs service 'a', which no loaded plugin provides/);
  t.doesNotThrow(() => orderPlugins([node('x', [a])], new Set(['a'])), 'the core may provide it');
  t.doesNotThrow(() => orderPlugins([node('x', [many])], new Set()), 'multi refs may have no provider');
});

t.test('two providers of a single-provider ref fail', async (t) => {
  t.throws(() => orderPlugins([node('p1', [], [a]), node('p2', [], [a])], new Set()), /Service 'a' is provided by more than one plugin: 'p1', 'p2'/);
  t.throws(() => orderPlugins([node('p1', [], [a])], new Set(['a'])), /core already provides/);
});

t.test('a cycle is printed as a path', async (t) => {
  t.throws(() => orderPlugins([node('x', [a], [b]), node('y', [b], [a])], new Set()), /Plugin dependency cycle: (x -> y -> x|y -> x -> y)/);
});

t.test('a "many" ref orders its providers first unless that closes a cycle (its list is live)', async (t) => {
  const opt = { id: 'a', multiple: false, optional: true } as unknown as AnyServiceRef;
  // `fs` provides a filesystem (many) and uses `rec`'s service; `rec` lists the filesystems
  const order = orderPlugins([node('fs', [opt], [many]), node('rec', [many], [a]), node('disk', [], [many])], new Set());
  t.same(order.map((n) => n.name), ['disk', 'rec', 'fs'], 'the single ref orders; the many ref keeps the providers it can');
  t.throws(() => orderPlugins([node('x', [a], [many]), node('y', [many, b], [a]), node('z', [a], [b])], new Set()),
    /Plugin dependency cycle/, 'a cycle of single refs still fails');
});
