import type { Logger } from 'pino';
import { availableParallelism } from 'node:os';
import { Cgroup } from './resources/cgroup.ts';
import { resolve as resolvePath } from 'node:path';
import {
  childrenRef, definePlugin, fileDoorRef, httpHooksRef, filesystemsRef, optional, streamTableRef, placeholdersRef, runCredentialsRef, processClockRef, processesRef, processHooksRef, processReplicaRef, stateExtrasRef,
  type ProcessChangeEvent, type ProcessReplicaService,
} from '../../sdk/index.ts';
import { CleanupRunner } from './cleanup.ts';
import { EncoderSection, validateEncoder } from './config-schema.ts';
import { dbHandle } from './db-document.ts';
import { ProcessManager } from './manager.ts';
import { stateCounts } from './process-entry.ts';
import { makerChecks } from './makers.ts';
import { createRunMonitor } from './run-monitor.ts';
import { metadataRoutes } from './routes-metadata.ts';
import { processRoutes } from './routes.ts';
import { probeProcess, probeRoutes, skillsRoutes } from './routes-probe.ts';
import { systemMetadataRoutes } from './routes-system-metadata.ts';
import { MetadataBudget } from './metadata-budget.ts';
import { Skills } from './skills.ts';
import { processesService } from './service.ts';
import { realClock } from './schedule.ts';
import { ProcessViews } from './views.ts';
import { PidDir, reapOrphans, UsageSampler } from './supervisor/index.ts';
import { engineResolver } from './resolve-memo.ts';
import { DemandHub } from './demand/hub.ts';
import { Slate } from './demand/slate.ts';
import { accessList, diskRootOf } from './validate.ts';
import { PROCESS_EVENT_TYPES } from './events.ts';
import { ResourceBudget } from './resources/budget.ts';
import { BudgetGate } from './resources/gate.ts';
import { machineUsageRef, ProcMachineUsage, type MachineUsage } from './resources/machine.ts';

/**
 * The process engine, a required plugin written against the SDK alone (the worked example of
 * the lifecycle): setup opens db.json (its `db` state document), provides `processes` and the
 * routes; `onReady` restores the stored processes once every plugin has registered its
 * placeholders and filesystems; `onListen` starts the order-`start` ones (`{memfs}` needs the
 * port); `onShutdown` stops every child while memfs and friends still serve, keeping orders.
 */
export const processPlugin = definePlugin({
  name: 'process',
  configKey: 'encoder',
  configSchema: EncoderSection,
  validate: (section) => validateEncoder(section),
  reads: ['storage', 'db', 'resources'],
  deps: {
    placeholders: placeholdersRef, runs: runCredentialsRef, filesystems: filesystemsRef, children: childrenRef, clock: optional(processClockRef), machine: optional(machineUsageRef),
    door: optional(fileDoorRef), streams: optional(streamTableRef),
  },
  provides: [processesRef, processReplicaRef],
  rootState: ['db'],
  events: PROCESS_EVENT_TYPES,
  async setup(ctx) {
    const enc = ctx.config;
    const { log } = ctx;
    const hooks = ctx.hooks.get(processHooksRef);
    const registry = ctx.deps.placeholders;
    const validator = validatorOf(enc, ctx.sections.storage.disk.dir);
    const dbText = dbHandle();
    const db = await ctx.state.open('db', dbText.options);
    const metadataBudget = new MetadataBudget(ctx.sections.db.max_metadata_mbytes * 1024 * 1024, () => db.data, dbText.bytes);
    const skills = Skills.retained(ctx.retain, enc.binary, log);
    // every child (processes, probes, skills) is started confined (core/process/confine)
    const spawn = ctx.deps.children.spawn.bind(ctx.deps.children);
    skills.use(spawn);
    const sampler = new UsageSampler();
    const runDir = resolvePath(ctx.sections.db.dir, 'run');
    // the filesystems list is live: providers mounted after this plugin appear in it
    const cleanup = new CleanupRunner(() => ctx.deps.filesystems, log);
    const closing = new AbortController();
    const logLimits = { maxLines: enc.log.max_lines, maxHistory: enc.log.max_history };
    const stateEntries = stateCounts();
    const { notify, preSave } = hookCalls(hooks, log);
    const clock = ctx.deps.clock ?? realClock;
    const { budget, gate } = resourceGate(ctx.sections.resources, ctx.deps.machine, hooks, log);
    // what a process's maker may have it do: at its making, at each start, for what is written or read on its behalf
    const makers = makerChecks(ctx.hooks.get(httpHooksRef), ctx.deps.runs, ctx.deps.filesystems);
    // on-demand processes: what they produce, who asks for it, their waiting playlists (demand/)
    const demand = new DemandHub({
      entries: () => manager.values(), get: (id) => manager.get(id), filesystems: () => ctx.deps.filesystems,
      streams: ctx.deps.streams, door: ctx.deps.door, slate: new Slate(enc.binary, (b, a, o) => spawn(b, a, o)), clock, log,
      idleSeconds: enc.ondemand.idle_seconds, budget: demandBudget(enc.ondemand), resources: gate,
      mayWrite: makers.mayWrite,
    });
    await demand.open();
    const manager: ProcessManager = new ProcessManager({
      db,
      storable: dbText.storable,
      metadataBudget,
      log,
      cleanup,
      maxProcesses: enc.max_processes,
      ffversion: () => skills.ffversion(),
      onDelete: (id, reference) => {
        demand.changed();
        return hooks.onDelete.promise({ id, reference }).catch((err: unknown) => log.warn({ err, process: id }, 'onDelete tap failed'));
      },
      preSave,
      onAdd: (id, reference) => { demand.changed(); notify(hooks.onAdd, { id, reference }); },
      onUpdate: (id, reference, previousId) => { demand.changed(); notify(hooks.onUpdate, { id, reference, previousId }); },
      // a process another node added or changed: its outputs join the demand table here too
      onReplicated: () => demand.changed(),
      // children a crashed predecessor left running go first, so none runs twice (supervisor/orphans.ts)
      beforeStart: async () => { await reapOrphans(runDir, log); },
      entryEnv: {
        binary: enc.binary, spawn: (binary, args, opts) => spawn(binary, args, opts), programDepth: ctx.deps.children.confinement.programDepth ?? 0, sampler, pidFiles: new PidDir(runDir, log),
        hooks, log, cpus: machineCores(), now: Date.now, clock, demand: demand.env,
        runs: ctx.deps.runs,
        // a process's maker is asked again at each start: a policy removed or a maker deleted stops what it made
        makerRefusal: makers.refusal, makerMayRun: makers.mayRun, makerDisk: makers.diskOf, owns: (id) => manager.runs(id),
        resolve: engineResolver(registry, validator, (id) => manager.lookup(id)),
        monitor: () => createRunMonitor(logLimits), stateEntries, budget: gate,
      },
    });

    // one set of views and one probe for the routes and the service (GraphQL answers from these too)
    const views = new ProcessViews((id) => manager.metadata(id));
    // a probe reaches of the disk what the process's runs do (its maker's folders)
    const probeSpawn = (id: string): typeof spawn => (file, args, o) => {
      const e = manager.get(id);
      return spawn(file, args, { ...o, disk: e && makers.diskOf(e) });
    };
    const probe = (id: string) => probeProcess(manager, enc.binary, closing.signal, id, probeSpawn(id), ctx.deps.runs);
    ctx.provide(processesRef, processesService(manager, {
      stateEntries, views, probe, input: validator.input, skills: () => skills.get(), makerMay: makers.may, authorityOf: makers.authorityOf, diskOf: makers.diskOf, log,
    }));
    // the cluster's seam: changes go through its shared store, and only owned processes run here
    ctx.provide(processReplicaRef, replicaOf(manager));
    const access = ctx.hooks.get(httpHooksRef).processAccess;
    // a process does what its maker may: what its command names at the listeners, asked of the access plugin
    processRoutes(ctx.http, manager, views, stateExtrasJson(ctx.hooks.get(stateExtrasRef)),
      (req, id, domain, action) => !access.isUsed() || access.call(req, { id, domain, action }) !== false, makers.authority);
    metadataRoutes(ctx.http, manager, metadataBudget);
    systemMetadataRoutes(ctx.http, db, dbText.storable, metadataBudget);
    probeRoutes(ctx.http, probe);
    skillsRoutes(ctx.http, skills);

    lifecycle(ctx, { manager, demand, db, closing, sampler, skills, log, budget });
  },
});


/** What the engine's resolver checks a definition against: `encoder.access`, the disk's folder, the confinement's folders. */
function validatorOf(enc: EncoderSection, diskDir: string) {
  return {
    input: accessList(enc.access.input, 'encoder.access.input'), output: accessList(enc.access.output, 'encoder.access.output'),
    diskRoot: diskRootOf(diskDir), writable: enc.confinement.writable.map(diskRootOf),
    modules: enc.confinement.modules ? diskRootOf(enc.confinement.modules) : '',
  };
}

/** The cluster's seam of the manager. */
function replicaOf(manager: ProcessManager): ProcessReplicaService {
  return {
    attach: (r) => manager.attach(r), records: () => manager.records(), apply: (r) => manager.apply(r),
    drop: (id) => manager.drop(id), rerun: (id) => manager.rerun(id),
  };
}

/** The service's resource budget (`resources.*`, resources/): every spawn is admitted by its gate (none without limits). */
function resourceGate(res: { max_cpu_usage: number; max_memory_usage: number; wait_seconds: number }, machine: MachineUsage | undefined,
  hooks: ConstructorParameters<typeof BudgetGate>[2], log: Logger): { budget: ResourceBudget; gate: BudgetGate | undefined } {
  const budget = new ResourceBudget({ maxCpu: res.max_cpu_usage, maxMemory: res.max_memory_usage }, machine ?? new ProcMachineUsage());
  return { budget, gate: budget.enabled ? new BudgetGate(budget, res.wait_seconds, hooks, log) : undefined };
}

/** The on-demand start budget of `encoder.ondemand` (demand/budget.ts). */
function demandBudget(o: { max_starts_per_client: number; client_window_seconds: number; max_running: number }) {
  return { maxStartsPerClient: o.max_starts_per_client, windowSeconds: o.client_window_seconds, maxRunning: o.max_running };
}

/** How long after the listen db.json is written as loaded. */
export const DB_REWRITE_DELAY_MS = 1000;

/** Restore at ready, start at listen, stop at shutdown (the engine's part of the service's life). */
function lifecycle(ctx: { onReady(fn: () => Promise<void>): void; onListen(fn: () => Promise<void>): void; onShutdown(fn: () => Promise<void>): void }, o: {
  manager: ProcessManager; demand: DemandHub; db: { save(): Promise<unknown> }; closing: AbortController;
  sampler: UsageSampler; skills: { settled(): Promise<unknown> }; log: Logger; budget: ResourceBudget;
}): void {
  const { manager, demand, db, closing, sampler, skills, log, budget } = o;
  let rewrite: NodeJS.Timeout | undefined;
  ctx.onReady(async () => {
    manager.restore();
    demand.rebuild();
  });
  ctx.onListen(async () => {
    await manager.startAll();
    demand.rebuild();
    // db.json as the reference writes it after loading; nothing acknowledged depends on this
    // write, so it waits until the start is over (1,000 processes: ~15 ms off the first answers)
    rewrite = setTimeout(() => { db.save().catch((err: unknown) => log.error({ err }, 'cannot write db.json')); }, DB_REWRITE_DELAY_MS).unref();
  });
  ctx.onShutdown(async () => {
    clearTimeout(rewrite);
    closing.abort();
    demand.close();
    await manager.shutdown();
    budget.close();
    sampler.close();
    await skills.settled();
  });
}

type ProcessHooks = ReturnType<(typeof processHooksRef)['create']>;

/** How the manager calls the process hooks: `on*` taps told, never awaited; `preSave` awaited, a throwing tap logged. */
function hookCalls(hooks: Readonly<ProcessHooks>, log: { warn(o: object, m: string): void }) {
  // taps are told, never awaited: an add or update answers once it is saved, not once they ran
  const notify = (hook: ProcessHooks['onAdd'], event: ProcessChangeEvent): void => {
    if (!hook.taps.length) return;
    hook.promise(event).catch((err: unknown) => log.warn({ err, process: event.id }, 'process hook tap failed'));
  };
  // a tap that throws is a bug of its plugin: logged, and the save goes ahead
  const preSave = async (event: Parameters<ProcessHooks['preSave']['promise']>[0]) => {
    if (!hooks.preSave.taps.length) return undefined;
    try {
      return (await hooks.preSave.promise(event)) ?? undefined;
    } catch (err) {
      log.warn({ err, process: event.id }, 'preSave tap failed');
      return undefined;
    }
  };
  return { notify, preSave };
}

/** What other plugins add to a process's state (stateExtrasRef), as JSON members. */
function stateExtrasJson(extras: Readonly<ReturnType<(typeof stateExtrasRef)['create']>>): (id: string) => string {
  return (id) => {
    const members: string[] = [];
    for (const [name, value] of Object.entries(extras.view.call({ id }))) {
      if (name !== 'id' && value !== undefined) members.push(`${JSON.stringify(name)}:${JSON.stringify(value)}`);
    }
    return members.join(',');
  };
}

/**
 * The cores a process's CPU share is a percent of (`limits.cpu_usage`, its state's `cpu_usage`):
 * the service's cgroup's CPU quota where it has one (a container's `--cpus`, as the reference's
 * successor counts), else the cores this process may run on.
 */
function machineCores(): number {
  return new Cgroup().read().cpuCores ?? availableParallelism();
}
