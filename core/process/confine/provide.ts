import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { ConfigData } from '../../config/config-data.ts';
import { Children, realPath } from './children.ts';
import { detectMechanism } from './mechanism.ts';
import { atOrBeneath } from './paths.ts';
import { rootOnlyPaths } from './root-only.ts';

/** The service's own code (children such as the SRT host run from it). */
const CODE = realPath(fileURLToPath(new URL('../../..', import.meta.url)));

/** What only root may read, found once per OS process, when the service runs as root (root-only.ts). */
function rootOnly(retained: Map<string, unknown>, keep: string[]): string[] {
  if (process.getuid?.() !== 0) return [];
  let found = retained.get('core:root-only') as string[] | undefined;
  if (!found) {
    found = rootOnlyPaths(keep.filter((k) => k));
    retained.set('core:root-only', found);
  }
  return found.filter((p) => !keep.some((k) => atOrBeneath(p, k)));
}

/**
 * The core's children service for one app: what is secret and what is writable, from the config.
 * The wrapper can be swapped through the environment (`MEDIA_CORE_CONFINE_WRAPPER`, trusted like the
 * config file), which the tests use to see the service without confinement.
 */
export function childrenService(config: ConfigData, configPath: string, env: NodeJS.ProcessEnv, log: Logger, retained: Map<string, unknown>): Children {
  const mechanism = detectMechanism(env.MEDIA_CORE_CONFINE_WRAPPER || undefined);
  const db = resolve(config.db.dir);
  const conf = config.encoder.confinement;
  const writable = [config.storage.disk.dir, ...conf.writable].map(realPath);
  const modules = conf.modules ? realPath(conf.modules) : '';
  const secrets = [configPath, db, config.tls.cert_file, config.tls.key_file].filter((p) => p).map(realPath);
  // what only root may read is looked for at the first child's start, not at the service's (issue 46.4)
  const keep = [...writable, modules, realPath(process.cwd()), CODE, realPath(process.execPath)];
  const hidden = () => [...secrets, ...rootOnly(retained, keep)];
  const children = new Children({
    mechanism, require: conf.require, hidden, writable, tmpBase: resolve(db, 'run', 'tmp'), modules,
    maxTasks: conf.max_tasks, warn: (message) => log.warn(message),
  });
  // once per OS process: the private folders of children a killed service left
  if (!retained.has('core:children')) {
    retained.set('core:children', true);
    children.sweep();
    (mechanism.mechanism === 'none' ? log.warn.bind(log) : log.info.bind(log))({ abi: mechanism.abi }, `children: ${mechanism.detail}`);
  }
  for (const h of secrets) {
    const w = writable.find((p) => atOrBeneath(p, h));
    // Landlock only grants: a secret inside a writable folder stays readable (and it is served by the API too)
    if (w && mechanism.mechanism !== 'none') log.warn({ secret: h, writable: w }, 'a secret lies inside a folder children may write: they can read it');
  }
  return children;
}
