import { readFileSync } from 'node:fs';
import { stripJsonComments } from '../config/jsonc.ts';
import { resolveConfigPath } from '../config/path.ts';
import { servingThreadCount } from '../door/threads/count.ts';
import { memoryLimitOf, runtimeEnv, runtimeFlags, threadsSettingOf } from './flags.ts';

/** Set on the relaunched process: flags are applied once, whatever they turned out to be. */
const APPLIED = 'CORE_RUNTIME_FLAGS_APPLIED';

/**
 * Imported first by the entry (app/main.ts), before anything else loads: when the runtime flags (flags.ts) are
 * not on this process's command line (or the malloc arena count not in its environment), the process replaces itself (execve: the same PID, so a
 * supervisor's signals still reach it) with one that has them. Costs one runtime start (about
 * 35 ms) on a plain `node app/main.js`, which is how `npm start` and the deploy files run it.
 */
function relaunch(): void {
  // Node 23.11+ (the pinned 24 has it; the typings of this repository predate it)
  const execve = (process as unknown as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (process.env[APPLIED] || typeof execve !== 'function') return;
  let text: string | undefined;
  try {
    text = stripJsonComments(readFileSync(resolveConfigPath(process.argv.slice(2), process.env), 'utf8'));
  } catch { /* no file yet (the first start writes it) or --config without a path: the loader says so */ }
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const flags = runtimeFlags(memoryLimitOf(text, process.env), given);
  const env = runtimeEnv(process.env, servingThreadCount(threadsSettingOf(text, process.env)));
  if (flags.length === 0 && !env) return;
  execve.call(process, process.execPath, [process.execPath, ...process.execArgv, ...flags, ...process.argv.slice(1)], { ...process.env, ...env, [APPLIED]: '1' });
}

relaunch();
