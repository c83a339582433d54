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
  /**
   * The wrapper can enter a private mount namespace (the writable folders mounted noexec) and a pid
   * namespace (everything a child starts dies with it): as root, or through a user namespace.
   */
  readonly ns: boolean;
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
  const m = /^landlock (\d+)(?: ns (\d))?/.exec(r.stdout ?? '');
  const abi = Number(m?.[1] ?? 0);
  if (!abi) return none('the kernel offers no Landlock here (Linux 5.13+ with landlock among its LSMs; a container may filter it)');
  const ns = m?.[2] === '1';
  const base = `confined by Landlock (ABI ${abi}): children write only beneath the storage roots and their own temporary folder, ` +
    `make no links, cannot read the service's secrets${abi >= 6 ? ' or signal it' : ''}`;
  return {
    mechanism: 'landlock', wrapper, abi, ns,
    detail: ns
      ? `${base}, cannot map what they or clients wrote as code (noexec mounts), and die with the service with everything they started (pid namespace)`
      : `${base} and die with the service; NOT isolated by namespaces (none can be entered here: a container's seccomp profile or ` +
        'user namespaces switched off): files clients wrote stay loadable as code by module filters that slip the API\'s check, and what a child forks may outlive it',
  };
}

function none(why: string): Mechanism {
  return { mechanism: 'none', abi: 0, ns: false, detail: `NOT confined: ${why}` };
}
