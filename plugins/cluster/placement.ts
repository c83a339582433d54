/**
 * Placement: which node runs which process. A PURE function (no I/O, no clock, no randomness):
 * the leader calls it with what it sees and writes the result; the same input always gives the
 * same output, so two calls on an unchanged cluster never move anything.
 *
 * Processes that share a non-empty `reference` (within one `domain`) form a GROUP: a channel's
 * ingest, snapshot and egress processes, as restreamer-ui gives them one reference. A group is
 * one unit here: placed on one node, moved whole on failover and by rebalancing, never split
 * (see "Placement" in the README). A process with an empty reference is a unit of its own.
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
  /** Processes with the same non-empty reference (and domain) run on one node; '' or absent: no group. */
  reference?: string;
  /** The process's domain, when its config has one (absent: ''). */
  domain?: string;
}

/** process id → node id. */
export type Assignments = Readonly<Record<string, string>>;

export interface PlacementChange {
  process: string;
  from: string | null;
  to: string | null;
  /** `group`: moved from a live node to stay with (or move with) its group. */
  reason: 'new' | 'failover' | 'rebalance' | 'removed' | 'group';
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

/** A group, or one ungrouped process: what is placed and moved as a whole. Ids in id order. */
interface Unit { ids: string[]; grouped: boolean }

/** The step's working state: counts and results so far. */
interface Plan {
  live: PlacementNode[];
  count: Map<string, number>;
  current: Assignments;
  assignments: Record<string, string>;
  changes: PlacementChange[];
  unplaced: string[];
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The units of the processes to run, in the order of their lowest id. */
function unitsOf(processes: readonly PlacementProcess[]): Unit[] {
  const groups = new Map<string, string[]>();
  const units: Unit[] = [];
  for (const p of processes) {
    if (p.order !== 'start') continue;
    if (!p.reference) { units.push({ ids: [p.id], grouped: false }); continue; }
    const key = JSON.stringify([p.domain ?? '', p.reference]);
    const ids = groups.get(key);
    if (ids) ids.push(p.id); else groups.set(key, [p.id]);
  }
  for (const ids of groups.values()) units.push({ ids, grouped: true });
  for (const u of units) u.ids.sort(byId);
  return units.sort((a, b) => byId(a.ids[0]!, b.ids[0]!));
}

/** Places a node still takes (Infinity without a limit). */
const free = (plan: Plan, n: PlacementNode): number => (n.maxProcesses === 0 ? Infinity : n.maxProcesses - plan.count.get(n.id)!);

/** Fewest processes, then lowest load, then lowest id. */
const lessBusy = (plan: Plan) => (a: PlacementNode, b: PlacementNode): number =>
  plan.count.get(a.id)! - plan.count.get(b.id)! || a.load - b.load || byId(a.id, b.id);

/** The live node holding most of the unit's processes now (ties: lowest id); none if none is there. */
function homeOf(plan: Plan, unit: Unit): PlacementNode | undefined {
  let home: PlacementNode | undefined;
  let most = 0;
  for (const n of plan.live) {
    const here = unit.ids.filter((id) => plan.current[id] === n.id).length;
    if (here > most) { home = n; most = here; }
  }
  return home;
}

/** Puts `ids` on `node`, recording a change for each that was not there. */
function assign(plan: Plan, unit: Unit, ids: string[], node: PlacementNode): void {
  for (const id of ids) {
    plan.assignments[id] = node.id;
    plan.count.set(node.id, plan.count.get(node.id)! + 1);
    const from = plan.current[id] ?? null;
    if (from === node.id) continue;
    const fromLive = from !== null && plan.live.some((n) => n.id === from);
    const reason = from === null ? 'new' : unit.grouped && fromLive ? 'group' : 'failover';
    plan.changes.push({ process: id, from, to: node.id, reason });
  }
}

/**
 * Keeps what can stay: first the units running whole on a live node (in id order: a lowered
 * limit sheds the rest), then units whose home takes their new or scattered members too.
 * Returns the units to place.
 */
function keep(plan: Plan, units: Unit[]): Unit[] {
  const joining: { unit: Unit; home: PlacementNode }[] = [];
  const toPlace: Unit[] = [];
  for (const unit of units) {
    const home = homeOf(plan, unit);
    if (!home) toPlace.push(unit);
    else if (unit.ids.some((id) => plan.current[id] !== home.id)) joining.push({ unit, home });
    else if (free(plan, home) >= unit.ids.length) assign(plan, unit, unit.ids, home);
    else toPlace.push(unit);
  }
  for (const { unit, home } of joining) {
    if (free(plan, home) >= unit.ids.length) assign(plan, unit, unit.ids, home);
    else toPlace.push(unit);
  }
  return toPlace;
}

/**
 * Places a unit on the least busy live node with room for all of it. When no node has, the
 * unit is not split: the node with the most room (then the most of its processes, then the
 * least busy) takes what fits, its processes there first, then in id order; the rest is unplaced.
 */
function placeUnit(plan: Plan, unit: Unit): void {
  const size = unit.ids.length;
  const whole = plan.live.filter((n) => free(plan, n) >= size).sort(lessBusy(plan))[0];
  if (whole) { assign(plan, unit, unit.ids, whole); return; }
  const here = (n: PlacementNode): number => unit.ids.filter((id) => plan.current[id] === n.id).length;
  const best = plan.live.filter((n) => free(plan, n) > 0)
    .sort((a, b) => free(plan, b) - free(plan, a) || here(b) - here(a) || lessBusy(plan)(a, b))[0];
  const ordered = best ? [...unit.ids].sort((a, b) =>
    Number(plan.current[b] === best.id) - Number(plan.current[a] === best.id) || byId(a, b)) : unit.ids;
  const fits = best ? ordered.slice(0, free(plan, best)) : [];
  if (best) assign(plan, unit, fits, best);
  for (const id of ordered.slice(fits.length).sort(byId)) {
    plan.unplaced.push(id);
    const from = plan.current[id];
    if (from) plan.changes.push({ process: id, from, to: null, reason: 'failover' });
  }
}

/**
 * The next assignments. Kept: what runs on a live node (a group: all of it on its node, new
 * members joining it there). Placed: new units, units whose node died or vanished or has no room
 * for them, largest first, each on the least busy live node with room for all of it. Removed: a
 * deleted or stopped process. Then at most ONE rebalancing move of a whole unit, from a busy node
 * to the least busy, when their difference exceeds the threshold: moving a process restarts its
 * ffmpeg, so the cluster converges one move per call.
 */
export function place(nodes: readonly PlacementNode[], processes: readonly PlacementProcess[],
  current: Assignments, opts: PlacementOptions = {}): PlacementResult {
  const threshold = Math.max(1, opts.threshold ?? 1);
  const live = nodes.filter((n) => n.alive).sort((a, b) => byId(a.id, b.id));
  const plan: Plan = { live, count: new Map(live.map((n) => [n.id, 0])), current, assignments: {}, changes: [], unplaced: [] };
  const units = unitsOf(processes);
  const wanted = new Set(units.flatMap((u) => u.ids));
  for (const id of Object.keys(current).sort(byId)) {
    if (!wanted.has(id)) plan.changes.push({ process: id, from: current[id]!, to: null, reason: 'removed' });
  }
  const toPlace = keep(plan, units).sort((a, b) => b.ids.length - a.ids.length || byId(a.ids[0]!, b.ids[0]!));
  for (const unit of toPlace) placeUnit(plan, unit);
  const moves = rebalance(plan, units, threshold);
  for (const m of moves) { plan.assignments[m.process] = m.to!; plan.changes.push(m); }
  return { assignments: plan.assignments, changes: plan.changes, unplaced: plan.unplaced };
}

/**
 * The one move to the least busy node with room from the busiest node whose difference to it
 * exceeds the threshold and that has a unit to give: the smallest unit there (then the one with
 * the highest id, a fixed choice) that the target has room for and whose move narrows the
 * difference (a group as large as the difference would only swap the two nodes' roles, so it
 * stays, and the next busiest node gives one instead).
 */
function rebalance(plan: Plan, units: Unit[], threshold: number): PlacementChange[] {
  const { live, count, assignments } = plan;
  const target = live.filter((n) => free(plan, n) > 0).sort(lessBusy(plan))[0];
  if (!target) return [];
  const sources = [...live].sort((a, b) => count.get(b.id)! - count.get(a.id)! || b.load - a.load || byId(a.id, b.id));
  for (const source of sources) {
    const spread = count.get(source.id)! - count.get(target.id)!;
    if (source === target || spread <= threshold) break;
    const there = units.map((u) => u.ids.filter((id) => assignments[id] === source.id)).filter((ids) => ids.length > 0)
      .sort((a, b) => a.length - b.length || byId(b[0]!, a[0]!));
    const ids = there.find((u) => u.length < spread && free(plan, target) >= u.length);
    if (ids) return ids.map((id) => ({ process: id, from: source.id, to: target.id, reason: 'rebalance' }));
  }
  return [];
}
