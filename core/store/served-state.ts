import { realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, isAbsolute, basename } from 'node:path';
import { BootError } from '../../sdk/index.ts';
import type { ConfigData } from '../config/config-data.ts';

const real = (p: string): string => {
  try { return realpathSync(p); } catch { return resolve(p); }
};
const inside = (dir: string, p: string): boolean => {
  const rel = relative(dir, p);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

/**
 * The config file holds every secret; the disk filesystem serves its folder to anyone. A config
 * file below `storage.disk.dir` is refused at start, with the fix in the message, unless it is
 * `<db.dir>/config.json`, which the disk filesystem hides with the rest of db.dir's own files.
 * Refusing (rather than hiding it silently) tells the operator the file was exposed before.
 */
export function refuseConfigUnderDisk(configPath: string, config: ConfigData): void {
  const disk = real(resolve(config.storage.disk.dir));
  const cfg = join(real(dirname(resolve(configPath))), basename(configPath));
  if (!inside(disk, cfg)) return;
  const hidden = join(real(resolve(config.db.dir)), 'config.json');
  if (cfg === hidden) return;
  throw new BootError(`the config file ${configPath} lies inside storage.disk.dir (${config.storage.disk.dir}), which is served publicly: `
    + 'move it out of that folder (or into db.dir)');
}
