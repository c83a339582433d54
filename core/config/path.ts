import { resolve } from 'node:path';
import { BootError } from '../../sdk/errors.ts';

/* The config file's path, in a module of its own: the runtime relaunch (core/runtime) reads it before anything else loads. */

export const DEFAULT_CONFIG_FILE = './data/config.json';

/** The config file path: `--config PATH`, then CORE_CONFIGFILE, then ./data/config.json. */
export function resolveConfigPath(argv: readonly string[], env: NodeJS.ProcessEnv): string {
  const i = argv.findIndex((a) => a === '--config' || a.startsWith('--config='));
  if (i >= 0) {
    const v = argv[i]!.includes('=') ? argv[i]!.slice('--config='.length) : argv[i + 1];
    if (!v) throw new BootError('--config needs a path');
    return resolve(v);
  }
  return resolve(env.CORE_CONFIGFILE || DEFAULT_CONFIG_FILE);
}
