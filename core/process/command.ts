import type { PlaceholderRegistry, PlaceholderRun, RunField } from '../../sdk/index.ts';
import type { CleanupRule, FullConfig, IOConfig } from './config-model.ts';
import { substitute, WHERE, type Vars, type Where } from './placeholders.ts';
import { resolveReference } from './references.ts';
import { moduleProblem } from './modules.ts';
import { preauthorize } from './preauth.ts';
import { checkDefinition, checkInput, checkOutput, type Validator } from './validate.ts';

/*
 * From a stored definition to what ffmpeg runs (reference 7.5 steps 4-8): placeholders
 * substituted in a copy, input references resolved, addresses validated, argv assembled.
 */

export interface Resolution {
  /** Global options. */
  options: string[];
  inputs: IOConfig[];
  outputs: IOConfig[];
  /** Cleanup rules of every output with their patterns resolved. */
  cleanup: CleanupRule[];
  /** The arguments without the binary (reference 7.6). */
  command: string[];
}

export interface ResolveEnv {
  registry: PlaceholderRegistry;
  validator: Validator;
  /** Another process's stored config, for `#id:output=oid` references. */
  lookup(id: string): FullConfig | undefined;
  /** The run of the child about to start: placeholders give it the run's credential (none without). */
  run?: PlaceholderRun;
}

/** `<global> (<input options> -i <address>)... (<output options> <address>)...` */
export function assemble(options: readonly string[], inputs: readonly IOConfig[], outputs: readonly IOConfig[]): string[] {
  const args = [...options];
  for (const i of inputs) args.push(...i.options, '-i', i.address);
  for (const o of outputs) args.push(...o.options, o.address);
  return args;
}

function resolveIO(io: IOConfig, base: Vars, idWhere: Where, addr: Where, opts: Where,
  key: 'inputid' | 'outputid', env: ResolveEnv): IOConfig {
  const id = substitute(io.id, idWhere, base, env.registry);
  const vars = { ...base, [key]: id };
  return {
    id,
    address: substitute(io.address, addr, vars, env.registry, env.run),
    options: io.options.map((o) => substitute(o, opts, vars, env.registry, env.run)),
    cleanup: io.cleanup.map((c) => ({ ...c, pattern: substitute(c.pattern, WHERE.cleanup, vars, env.registry) })),
  };
}

/** Resolves and validates a definition; a string is the reason it is invalid. */
export function resolveProcess(c: FullConfig, env: ResolveEnv): Resolution | string {
  const problem = checkDefinition(c);
  if (problem) return problem;
  const base: Vars = { processid: c.id, reference: c.reference };
  const options = c.options.map((o) => substitute(o, WHERE.global, base, env.registry, env.run));
  const inputs = c.input.map((io) => resolveIO(io, base, WHERE.inputId, WHERE.inputAddress, WHERE.inputOptions, 'inputid', env));
  const outputs = c.output.map((io) => resolveIO(io, base, WHERE.outputId, WHERE.outputAddress, WHERE.outputOptions, 'outputid', env));
  for (const io of inputs) {
    const ref = resolveReference(io.address, c.id, env.lookup, env.registry, env.run);
    if (ref && 'error' in ref) return `the address for input '#${c.id}:${io.id}' (${io.address}) is invalid: ${ref.error}`;
    if (ref) io.address = ref.address;
    const why = checkInput(env.validator, c.id, io);
    if (why) return why;
  }
  for (const io of outputs) {
    const why = checkOutput(env.validator, c.id, io);
    if (why) return why;
  }
  // ffmpeg is given the outputs with their credential as a header; the run's scope is read from these
  const command = assemble(options, inputs, preauthorize(outputs, env.run));
  const why = moduleProblem(command, env.validator.modules ?? '');
  if (why) return why;
  return { options, inputs, outputs, cleanup: outputs.flatMap((o) => o.cleanup), command };
}

/** The fields of a resolved command in order, with their sections: what a run's credential is bound to. */
export function runFields(r: Resolution): RunField[] {
  const out: RunField[] = r.options.map((text) => ({ section: 'global', text }));
  for (const i of r.inputs) out.push(...i.options.map((text) => ({ section: 'input' as const, text })), { section: 'input', text: i.address });
  for (const o of r.outputs) out.push(...o.options.map((text) => ({ section: 'output' as const, text })), { section: 'output', text: o.address });
  return out;
}
