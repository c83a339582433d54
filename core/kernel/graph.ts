import { BootError, type AnyServiceRef } from '../../sdk/index.ts';

/** What the graph needs to know of a plugin. */
export interface GraphNode {
  name: string;
  deps: AnyServiceRef[];
  provides: AnyServiceRef[];
}

/**
 * Orders plugins so that providers come before consumers (ties broken by config order); the
 * providers of a "many" ref come first unless that would close a cycle (`withSoftEdges`).
 * Fails on a missing provider, two providers of a single-provider ref, and cycles of single or
 * optional refs (with the path).
 */
export function orderPlugins<N extends GraphNode>(nodes: N[], coreProvided: ReadonlySet<string>): N[] {
  const providers = new Map<string, number[]>();
  nodes.forEach((n, i) => {
    for (const ref of n.provides) {
      const list = providers.get(ref.id) ?? [];
      list.push(i);
      providers.set(ref.id, list);
      if (!ref.multiple && coreProvided.has(ref.id)) {
        throw new BootError(`Plugin '${n.name}' provides '${ref.id}', which the core already provides`);
      }
    }
  });
  for (const [id, list] of providers) {
    const ref = nodes[list[0]!]!.provides.find((r) => r.id === id)!;
    if (!ref.multiple && list.length > 1) {
      throw new BootError(`Service '${id}' is provided by more than one plugin: ${list.map((i) => `'${nodes[i]!.name}'`).join(', ')}`);
    }
  }
  const hard: number[][] = nodes.map(() => []);
  const soft: number[][] = nodes.map(() => []);
  nodes.forEach((n, i) => {
    for (const ref of n.deps) {
      const list = (providers.get(ref.id) ?? []).filter((p) => p !== i);
      if (list.length === 0 && !ref.multiple && !ref.optional && !coreProvided.has(ref.id)) {
        throw new BootError(`Plugin '${n.name}' needs service '${ref.id}', which no loaded plugin provides`);
      }
      (ref.multiple ? soft : hard)[i]!.push(...list);
    }
  });
  const edges = withSoftEdges(hard, soft);
  const cycle = findCycle(edges);
  if (cycle) throw new BootError(`Plugin dependency cycle: ${cycle.map((i) => nodes[i]!.name).join(' -> ')}`);
  const done = new Set<number>();
  const order: N[] = [];
  while (order.length < nodes.length) {
    const next = nodes.findIndex((_, i) => !done.has(i) && edges[i]!.every((d) => done.has(d)));
    done.add(next);
    order.push(nodes[next]!);
  }
  return order;
}

/**
 * The ordering edges: every hard one (a single or optional ref), and each soft one (a "many" ref,
 * whose list is live: a provider mounted later still joins it) unless it would close a cycle, so
 * a plugin that provides a filesystem may use a service of a plugin that lists filesystems.
 */
function withSoftEdges(hard: number[][], soft: number[][]): number[][] {
  const edges = hard.map((l) => [...l]);
  const reaches = (from: number, to: number): boolean => {
    const seen = new Set<number>();
    const todo = [from];
    while (todo.length > 0) {
      const n = todo.pop()!;
      if (n === to) return true;
      if (seen.has(n)) continue;
      seen.add(n);
      todo.push(...edges[n]!);
    }
    return false;
  };
  if (findCycle(edges)) return edges;
  soft.forEach((list, i) => { for (const d of list) if (!reaches(d, i)) edges[i]!.push(d); });
  return edges;
}

/** A cycle as a path of node indexes (first node repeated at the end), or undefined. */
function findCycle(edges: number[][]): number[] | undefined {
  const state = new Array<number>(edges.length).fill(0);
  const stack: number[] = [];
  const visit = (i: number): number[] | undefined => {
    state[i] = 1;
    stack.push(i);
    for (const d of edges[i]!) {
      if (state[d] === 1) return [...stack.slice(stack.indexOf(d)), d];
      if (state[d] === 0) {
        const c = visit(d);
        if (c) return c;
      }
    }
    stack.pop();
    state[i] = 2;
    return undefined;
  };
  for (let i = 0; i < edges.length; i++) {
    if (state[i] === 0) {
      const c = visit(i);
      if (c) return c;
    }
  }
  return undefined;
}
