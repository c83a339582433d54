/**
 * Placement: which node runs which process. A PURE function (no I/O, no clock, no randomness):
 * the leader calls it with what it sees and writes the result; the same input always gives the
 * same output, so two calls on an unchanged cluster never move anything.
 */

export interface PlacementNode {
  id: string;
  /** Announced within ttl (see NodesView). A dead node keeps nothing. */
  alive: boolean;
  /** Processes it takes at most (0 = no limit). */
  maxProcesses: number;
  /** Load per CPU (loadavg / cpus): only breaks ties between nodes with as many processes. */
  load: number;
}

export interface PlacementProcess {
  id: string;
  /** Only processes ordered to run are placed; a stopped one needs no node. */
  order: 'start' | 'stop';
}

/** process id → node id. */
export type Assignments = Readonly<Record<string, string>>;

export interface PlacementChange {
  process: string;
  from: string | null;
  to: string | null;
  reason: 'new' | 'failover' | 'rebalance' | 'removed';
}

export interface PlacementResult {
  assignments: Record<string, string>;
  changes: PlacementChange[];
  /** Processes to run that no live node has room for. */
  unplaced: string[];
}

export interface PlacementOptions {
  /**
   * A rebalancing move happens when the busiest node runs more than `threshold` processes more
   * than the least busy one with room (at least 1: a difference of one would move back and forth).
   */
  threshold?: number;
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The next assignments. Kept: a running process on a live node. Placed: a new process, or one
 * whose node died or vanished, on the live node with the fewest processes (then the lowest load,
 * then the lowest id) that has room. Removed: a deleted or stopped process. Then at most ONE
 * rebalancing move, from the busiest node to the least busy, when their difference exceeds the
 * threshold: moving a process restarts its ffmpeg, so the cluster converges one move per call.
 */
export function place(nodes: readonly PlacementNode[], processes: readonly PlacementProcess[],
  current: Assignments, opts: PlacementOptions = {}): PlacementResult {
  const threshold = Math.max(1, opts.threshold ?? 1);
  const live = nodes.filter((n) => n.alive).sort((a, b) => byId(a.id, b.id));
  const count = new Map(live.map((n) => [n.id, 0]));
  const room = (n: PlacementNode): boolean => n.maxProcesses === 0 || count.get(n.id)! < n.maxProcesses;
  const wanted = processes.filter((p) => p.order === 'start').map((p) => p.id).sort(byId);
  const wantedSet = new Set(wanted);
  const assignments: Record<string, string> = {};
  const changes: PlacementChange[] = [];
  const unplaced: string[] = [];

  for (const id of Object.keys(current).sort(byId)) {
    if (!wantedSet.has(id)) changes.push({ process: id, from: current[id]!, to: null, reason: 'removed' });
  }
  // keep what runs on a live node (within its capacity, in id order: a lowered limit sheds the rest)
  const toPlace: string[] = [];
  for (const id of wanted) {
    const node = live.find((n) => n.id === current[id]);
    if (node && room(node)) { assignments[id] = node.id; count.set(node.id, count.get(node.id)! + 1); } else toPlace.push(id);
  }
  const leastBusy = (): PlacementNode | undefined => live.filter(room).sort((a, b) =>
    count.get(a.id)! - count.get(b.id)! || a.load - b.load || byId(a.id, b.id))[0];
  for (const id of toPlace) {
    const node = leastBusy();
    const from = current[id] ?? null;
    if (!node) { unplaced.push(id); if (from) changes.push({ process: id, from, to: null, reason: 'failover' }); continue; }
    assignments[id] = node.id;
    count.set(node.id, count.get(node.id)! + 1);
    changes.push({ process: id, from, to: node.id, reason: from ? 'failover' : 'new' });
  }

  const move = rebalance(live, count, room, assignments, threshold);
  if (move) { assignments[move.process] = move.to!; changes.push(move); }
  return { assignments, changes, unplaced };
}

/** The one move from the busiest node to the least busy one with room, if their spread exceeds the threshold. */
function rebalance(live: PlacementNode[], count: Map<string, number>, room: (n: PlacementNode) => boolean,
  assignments: Record<string, string>, threshold: number): PlacementChange | undefined {
  const busiest = [...live].sort((a, b) => count.get(b.id)! - count.get(a.id)! || b.load - a.load || byId(a.id, b.id))[0];
  const target = live.filter(room).sort((a, b) => count.get(a.id)! - count.get(b.id)! || a.load - b.load || byId(a.id, b.id))[0];
  if (!busiest || !target || busiest === target) return undefined;
  if (count.get(busiest.id)! - count.get(target.id)! <= threshold) return undefined;
  // the highest id on the busiest node: a fixed choice, so the same input moves the same process
  const id = Object.keys(assignments).filter((p) => assignments[p] === busiest.id).sort(byId).at(-1);
  return id === undefined ? undefined : { process: id, from: busiest.id, to: target.id, reason: 'rebalance' };
}
