import type { PlaceholderRegistry } from '../../sdk/index.ts';
import type { FullConfig } from './config-model.ts';
import { beforeLastBrace } from './placeholders.ts';

const NAME = /\{([a-z]+(?::[0-9A-Za-z]+)?)(?:\^.)?(?:,[^}]*)?\}/g;
const BUILTIN = new Set(['processid', 'reference', 'inputid', 'outputid']);

/**
 * A clearer reason for a definition that did not resolve: when an address names a placeholder
 * no loaded plugin registers (`{memfs}` after memfs was removed from `plugins`), say so first,
 * since the checks that failed only saw the literal text.
 */
export function explainUnresolved(c: FullConfig, registry: PlaceholderRegistry, reason: string): string {
  const missing = new Set<string>();
  for (const io of [...c.input, ...c.output]) {
    for (const m of beforeLastBrace(io.address).matchAll(NAME)) {
      if (!BUILTIN.has(m[1]!) && !registry.get(m[1]!)) missing.add(`{${m[1]}}`);
    }
  }
  if (missing.size === 0) return reason;
  return `placeholder ${[...missing].join(', ')} is not provided by any loaded plugin: ${reason}`;
}
