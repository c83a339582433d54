import type { PlaceholderRegistry, PlaceholderRun } from '../../sdk/index.ts';
import type { FullConfig } from './config-model.ts';
import { substitute, WHERE } from './placeholders.ts';

/*
 * Input references (reference 8.3): an input address `#<processid>:output=<outputid>` reads
 * what another process writes to that output. Evaluated whenever the command is built.
 */

const REF = /^#(.+?):output=(.+)$/s;

/** `{ process, output }` for a reference address, an error text for a malformed one, undefined otherwise. */
export function parseReference(address: string): { process: string; output: string } | { error: string } | undefined {
  if (!address.startsWith('#')) return undefined;
  const m = REF.exec(address);
  if (!m) return { error: `invalid format (${address.slice(1)})` };
  return { process: m[1]!, output: m[2]! };
}

/**
 * The resolved address a reference points to, or the reason it cannot be used.
 * `lookup` returns another process's config (unresolved, as stored).
 */
export function resolveReference(
  address: string, self: string, lookup: (id: string) => FullConfig | undefined, registry: PlaceholderRegistry, run?: PlaceholderRun,
): { address: string } | { error: string } | undefined {
  const ref = parseReference(address);
  if (!ref || 'error' in ref) return ref;
  if (ref.process === self) return { error: 'self-reference not possible' };
  const other = lookup(ref.process);
  if (!other) return { error: `unknown process '${ref.process}'` };
  const vars = { processid: other.id, reference: other.reference };
  for (const out of other.output) {
    const oid = substitute(out.id, WHERE.outputId, vars, registry);
    if (oid !== ref.output) continue;
    return { address: substitute(out.address, WHERE.outputAddress, { ...vars, outputid: oid }, registry, run) };
  }
  return { error: `the process '${ref.process}' has no outputs with the ID '${ref.output}'` };
}
