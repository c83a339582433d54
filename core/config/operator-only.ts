import { ApiError } from '../../sdk/index.ts';
import type { PluginEntry } from '../../sdk/index.ts';
import { pluginCode } from './plugin-entries.ts';
import { deepEqual, getPath, setPath } from './schema-walk.ts';

/*
 * Keys the API cannot change ('plugins': which code it names, see pluginCode; a plugin's own
 * settings in its entry stay editable) (design 1b: the config file and the environment are trusted, the API
 * is not). Each decides what code runs or where children may write: the plugins to load, the program
 * to run, the confinement, and the folders the disk filesystem and the state live in.
 */
export const OPERATOR_ONLY: readonly string[] = [
  'plugins', 'encoder.binary', 'ffmpeg.binary', 'encoder.confinement', 'ffmpeg.confinement', 'storage.disk.dir', 'db.dir',
];

function samePluginCode(a: unknown, b: unknown): boolean {
  return Array.isArray(a) && Array.isArray(b) && deepEqual(pluginCode(a as PluginEntry[]), pluginCode(b as PluginEntry[]));
}

/**
 * Holds the operator-only keys of a merged PUT body to what is stored. A value equal to the stored
 * one or to the active one (set by the environment) is taken as unchanged: clients send back the
 * whole config they read. Anything else is a 400 naming each key, and nothing is stored.
 */
export function holdOperatorKeys(merged: Record<string, unknown>, stored: object, active: object, sent: object = {}): void {
  const changed: string[] = [];
  for (const key of OPERATOR_ONLY) {
    const next = getPath(merged, key);
    const was = getPath(stored, key);
    const same = key === 'plugins' ? samePluginCode : deepEqual;
    if (key === 'plugins' && Array.isArray(next) && same(next, was)) continue;
    if (next === undefined || same(next, was) || same(next, getPath(active, key))) {
      setPath(merged, key, structuredClone(was));
      continue;
    }
    changed.push(key);
  }
  // the keys the client wrote first (an alias changes its twin too)
  changed.sort((a, b) => Number(getPath(sent, b) !== undefined) - Number(getPath(sent, a) !== undefined));
  if (changed.length) {
    throw new ApiError(400, 'Invalid config', changed.map((k) => `${k}: can only be set in the config file or the environment, not through the API`),
      'CONFIG_OPERATOR_ONLY');
  }
}
