import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { isFile } from '../../sdk/index.ts';

/** Checks of the kernel's own sections against the machine (the router's folders, the encoder). */

export function isDir(p: string): boolean {
  try { return statSync(p).isDirectory(); } catch { return false; }
}

/** Whether a program name resolves to an executable (a path, or searched in PATH). */
export function findExecutable(bin: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = bin.includes('/') ? [bin] : (env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, bin));
  for (const c of candidates) {
    try { accessSync(c, constants.X_OK); if (isFile(c)) return c; } catch { /* next */ }
  }
  return undefined;
}
