import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { ConfigData } from '../../config/config-data.ts';
import { Children, realPath } from './children.ts';
import { detectMechanism } from './mechanism.ts';

function isBeneath(parent: string, p: string): boolean {
  return p === parent || p.startsWith(`${parent}/`);
}

/**
 * The core's children service for one app: what is secret and what is writable, from the config.
 * The wrapper can be swapped through the environment (`MEDIA_CORE_CONFINE_WRAPPER`, trusted like the
 * config file), which the tests use to see the service without confinement.
 */
export function childrenService(config: ConfigData, configPath: string, env: NodeJS.ProcessEnv, log: Logger, retained: Map<string, unknown>): Children {
  const mechanism = detectMechanism(env.MEDIA_CORE_CONFINE_WRAPPER || undefined);
  const db = resolve(config.db.dir);
  const hidden = [configPath, db, config.tls.cert_file, config.tls.key_file].filter((p) => p).map(realPath);
  const writable = [config.storage.disk.dir, ...config.encoder.confinement.writable].map(realPath);
  const children = new Children({
    mechanism, require: config.encoder.confinement.require, hidden, writable, tmpBase: resolve(db, 'run', 'tmp'),
  });
  // once per OS process: the private folders of children a killed service left
  if (!retained.has('core:children')) {
    retained.set('core:children', true);
    children.sweep();
    (mechanism.mechanism === 'none' ? log.warn.bind(log) : log.info.bind(log))({ abi: mechanism.abi }, `children: ${mechanism.detail}`);
  }
  for (const h of hidden) {
    const w = writable.find((p) => isBeneath(p, h));
    // Landlock only grants: a secret inside a writable folder stays readable (and it is served by the API too)
    if (w && mechanism.mechanism !== 'none') log.warn({ secret: h, writable: w }, 'a secret lies inside a folder children may write: they can read it');
  }
  return children;
}
