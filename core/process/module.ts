import { availableParallelism } from 'node:os';
import { resolve as resolvePath } from 'node:path';
import {
  filesystemsRef, kernelHooksRef, placeholdersRef, processesRef, processHooksRef,
  type FilesystemService, type PlaceholderRegistry,
} from '../../sdk/index.ts';
import type { CoreModule } from '../kernel/kernel.ts';
import { CleanupRunner } from './cleanup.ts';
import { resolveProcess } from './command.ts';
import { ProcessManager } from './manager.ts';
import { createRunMonitor } from './run-monitor.ts';
import { metadataRoutes } from './routes-metadata.ts';
import { processRoutes } from './routes.ts';
import { probeRoutes, skillsRoutes } from './routes-probe.ts';
import { Skills } from './skills.ts';
import { processesService } from './service.ts';
import { PidDir, reapOrphans, UsageSampler } from './supervisor/index.ts';
import { accessList, diskRootOf } from './validate.ts';

/**
 * The process engine as a core module: restores the stored processes, serves the process API,
 * provides `processes` and the `process` hooks, starts order-`start` processes once the
 * listener is bound and stops every child first at close (their order kept).
 */
export const processModule: CoreModule = async (k) => {
  const log = k.log.child({ component: 'process' });
  const enc = k.config.encoder;
  const hooks = k.hooks.get(processHooksRef);
  const registry = k.services.resolve(placeholdersRef) as PlaceholderRegistry;
  const filesystems = () => k.services.resolve(filesystemsRef) as readonly FilesystemService[];
  const validator = {
    input: accessList(enc.access.input, 'encoder.access.input'),
    output: accessList(enc.access.output, 'encoder.access.output'),
    diskRoot: diskRootOf(k.config.storage.disk.dir),
  };
  const skills = Skills.retained(k.retained, enc.binary, log);
  const sampler = new UsageSampler();
  const runDir = resolvePath(k.config.db.dir, 'run');
  const cleanup = new CleanupRunner(filesystems, log);
  const closing = new AbortController();
  const logLimits = { maxLines: enc.log.max_lines, maxHistory: enc.log.max_history };

  const manager: ProcessManager = new ProcessManager({
    db: k.db,
    log,
    cleanup,
    maxProcesses: enc.max_processes,
    ffversion: () => skills.ffversion(),
    onDelete: (id, reference) => hooks.onDelete.promise({ id, reference })
      .catch((err: unknown) => log.warn({ err, process: id }, 'onDelete tap failed')),
    entryEnv: {
      binary: enc.binary,
      sampler,
      pidFiles: new PidDir(runDir, log),
      hooks,
      log,
      cpus: availableParallelism(),
      now: Date.now,
      resolve: (c) => resolveProcess(c, { registry, validator, lookup: manager.lookup }),
      monitor: () => createRunMonitor(logLimits),
    },
  });
  // Children a crashed predecessor left running go first, so none runs twice (supervisor/orphans.ts).
  await reapOrphans(runDir, log);
  manager.restore();
  // db.json as the reference writes it after loading; nothing acknowledged depends on this write
  k.db.save().catch((err: unknown) => log.error({ err }, 'cannot write db.json'));

  k.services.provide(processesRef, processesService(manager));
  await k.http.register(async (scope) => {
    processRoutes(scope, manager);
    metadataRoutes(scope, manager);
    probeRoutes(scope, manager, enc.binary, closing.signal);
    skillsRoutes(scope, skills);
  });

  k.hooks.get(kernelHooksRef).onListen.tapPromise('process', () => manager.startAll());
  k.onShutdown(async () => {
    closing.abort();
    await manager.shutdown();
    sampler.close();
    await skills.settled();
  });
};
