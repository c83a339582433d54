import { isAbsolute, resolve } from 'node:path';
import { BootError, linearRegex, type LinearRegex } from '../../sdk/index.ts';
import type { FullConfig, IOConfig } from './config-model.ts';
import { checkOutputAddress, urlProblem } from './output-address.ts';
import { scheduleProblem } from './schedule.ts';

/*
 * Checks of a process definition (reference 7.5 and 8.4): IDs, addresses, the access lists of
 * `encoder.access.*` and the disk root for file outputs. Every function returns the reasons
 * the API shows; none throws for user input.
 */

const CONTROL = /[\u0000-\u001f\u007f]/;
const SCHEME = /^[a-z][a-z0-9.+\-:]*:\/{1,3}/i;

export interface AccessList {
  allow: LinearRegex[];
  block: LinearRegex[];
}

/*
 * RE2's syntax, matched in linear time as the reference's Go regexps are: a pattern a config PUT
 * sets runs against every address a process names (`(a+)+$` held the main thread with a RegExp).
 */
function compile(list: readonly string[], key: string): LinearRegex[] {
  return list.map((re, i) => {
    const compiled = linearRegex(re);
    if (!compiled) throw new BootError(`${key}[${i}]: invalid regular expression '${re}' (RE2 syntax: no backreferences or lookaround)`);
    return compiled;
  });
}

/** The compiled `encoder.access.<input|output>` lists. */
export function accessList(cfg: { allow: readonly string[]; block: readonly string[] }, key: string): AccessList {
  return { allow: compile(cfg.allow, `${key}.allow`), block: compile(cfg.block, `${key}.block`) };
}

/** Block wins; an empty allow list allows everything. */
export function allowed(list: AccessList, address: string): boolean {
  if (list.block.some((re) => re.test(address))) return false;
  return list.allow.length === 0 || list.allow.some((re) => re.test(address));
}

export interface Validator {
  input: AccessList;
  output: AccessList;
  /** Absolute path of `storage.disk.dir`: file outputs must stay inside it... */
  diskRoot: string;
  /** ...or inside one of these (`encoder.confinement.writable`, absolute). */
  writable?: readonly string[];
  /** `encoder.confinement.modules` (absolute), or '' when module filters are refused. */
  modules?: string;
}

/** The reason an ID cannot be used, or undefined. */
export function idProblem(id: string, what: string): string | undefined {
  if (id.trim() === '') return `an empty ${what} is not allowed`;
  if (CONTROL.test(id)) return `the ${what} must not contain control characters`;
  return undefined;
}

/** Checks the unresolved definition: IDs present, unique, addresses not blank. */
export function checkDefinition(c: FullConfig): string | undefined {
  const p = idProblem(c.id, 'ID');
  if (p) return p;
  for (const [list, what] of [[c.input, 'input'], [c.output, 'output']] as const) {
    if (list.length === 0) return `at least one ${what} must be defined`;
    const seen = new Set<string>();
    for (const io of list) {
      const q = idProblem(io.id, `${what} ID`);
      if (q) return q;
      if (seen.has(io.id)) return `the ${what} ID '${io.id}' is used more than once`;
      seen.add(io.id);
      if (io.address.trim() === '') return `the address for ${what} '#${c.id}:${io.id}' must not be empty`;
    }
  }
  return scheduleProblem(c);
}

/** `playout:rtmp://...`: a word and a colon in front of a URL, which a plugin reads behind it. */
const WRAPPED = /^[a-z][a-z0-9+.-]*:(?=[a-z][a-z0-9+.-]*:\/{1,3})/i;

/**
 * Why a source is refused, or undefined: the one rule for every way a source enters (process
 * inputs, and through `processesRef.inputProblem` the playout plugin's playlist items, stream
 * switches and relays). A URL must parse; `encoder.access.input` must allow the address, and for a
 * wrapped URL (`playout:rtmp://h/x`) the URL behind the prefix too, as that is what gets opened.
 */
export function sourceProblem(list: AccessList, address: string): string | undefined {
  if (SCHEME.test(address)) {
    const u = urlProblem(address);
    if (u) return u;
  }
  if (!allowed(list, address)) return 'address is not allowed';
  const wrap = WRAPPED.exec(address);
  return wrap ? sourceProblem(list, address.slice(wrap[0].length)) : undefined;
}

/** Reference 8.4 for one input address (already resolved). */
export function checkInput(v: Validator, pid: string, io: IOConfig): string | undefined {
  const why = sourceProblem(v.input, io.address);
  return why ? `the address for input '#${pid}:${io.id}' (${io.address}) is invalid: ${why}` : undefined;
}

/** Reference 8.4 for one output address (already resolved). */
export function checkOutput(v: Validator, pid: string, io: IOConfig): string | undefined {
  const why = checkOutputAddress(v, io.address);
  return why ? `the address for output '#${pid}:${io.id}' is invalid: ${why}` : undefined;
}

/** The absolute disk root, as output validation compares it. */
export function diskRootOf(dir: string): string {
  return isAbsolute(dir) ? resolve(dir) : resolve(process.cwd(), dir);
}
