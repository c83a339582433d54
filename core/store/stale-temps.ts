import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pidAlive } from '../../sdk/index.ts';

/**
 * Removes temp files the atomic writer (`.<name>.<pid>.<hex>.tmp`) left behind when the service
 * was killed mid-write. Only files whose writer pid is gone (or is this process, which has not
 * written yet when this runs at start) are removed, so a second service on the folder is safe.
 */
export async function removeStaleTemps(dir: string, name: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return [];
  }
  const prefix = `.${name}.`;
  const removed: string[] = [];
  for (const e of entries) {
    if (!e.startsWith(prefix) || !e.endsWith('.tmp')) continue;
    const m = /^(\d+)\.[0-9a-f]+\.tmp$/.exec(e.slice(prefix.length));
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid !== process.pid && pidAlive(pid)) continue;
    await unlink(join(dir, e)).then(() => removed.push(e), () => {});
  }
  return removed;
}

