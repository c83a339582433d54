import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Confinement } from '../../../sdk/index.ts';

/** Where `scripts/ensure-confine.sh` builds the wrapper (confine.c). */
export const DEFAULT_WRAPPER = fileURLToPath(new URL('./build/media-core-confine', import.meta.url));

export interface Mechanism extends Confinement {
  /** The wrapper to exec children through (mechanism `landlock`). */
  readonly wrapper?: string;
  /** Landlock's ABI version (0 without). */
  readonly abi: number;
}

/**
 * Finds out once per app whether children can be confined here: the wrapper is built and the
 * kernel lets a process enter a Landlock sandbox (the wrapper tries it in a throwaway child, as a
 * container's seccomp filter may refuse it even where the kernel has it).
 */
export function detectMechanism(wrapper = DEFAULT_WRAPPER): Mechanism {
  try {
    accessSync(wrapper, constants.X_OK);
  } catch {
    return none(`the wrapper ${wrapper} is not built (run scripts/ensure-confine.sh; it needs a C compiler)`);
  }
  const r = spawnSync(wrapper, ['--probe'], { encoding: 'utf8', timeout: 5000, env: {} });
  const abi = Number(/^landlock (\d+)/.exec(r.stdout ?? '')?.[1] ?? 0);
  if (!abi) return none('the kernel offers no Landlock here (Linux 5.13+ with landlock among its LSMs; a container may filter it)');
  return {
    mechanism: 'landlock', wrapper, abi,
    detail: `confined by Landlock (ABI ${abi}): children write only beneath the storage roots and their own temporary folder, ` +
      `cannot read the service's secrets${abi >= 6 ? ' or signal it' : ''}, and die with it`,
  };
}

function none(why: string): Mechanism {
  return { mechanism: 'none', abi: 0, detail: `NOT confined: ${why}` };
}
