import { PARAMS_OPTIONS, paramFiles } from './encoder-params.ts';
import { graphFiles } from './filter-graph.ts';
import { protocolOf } from './kernel-path.ts';
import {
  FILE_OPTIONS, FILTER_OPTIONS, FLAGS, READ_OPTIONS, REFUSED_FLAGS, REFUSED_OPTIONS, RELATIVE_OPTIONS, TEXT_OPTIONS,
} from './option-table.ts';

/*
 * An options list read the way ffmpeg reads it: `-name value` pairs and flags; anything else
 * is a positional argument, which ffmpeg takes for an OUTPUT file. Every place where a file may
 * be written is handed to the caller's checks.
 */

export interface OptionChecks {
  /** An output address (positional argument, `-progress`, `-hls_segment_filename`, ...). */
  output(address: string): string | undefined;
  /** An input address (`-i` inside options). */
  input(address: string): string | undefined;
  /** A name ffmpeg joins to the output's folder (`master_pl_name`, ...). */
  relative(name: string): string | undefined;
}

function isFlag(name: string): boolean {
  return FLAGS.has(name) || (name.startsWith('no') && FLAGS.has(name.slice(2)));
}

/** Absolute, climbing or a file-like protocol: worth checking even as the value of an unknown option. */
function looksLikePath(value: string): boolean {
  if (value.startsWith('/') || value.startsWith('../') || value.includes('/../')) return true;
  const p = protocolOf(value);
  return p !== undefined && ['file', 'tee', 'pipe', 'md5', 'crypto', 'async', 'cache', 'fd'].includes(p.name.split('+')[0]!);
}

/** The reason `options` are refused, or undefined. */
export function scanOptions(options: readonly string[], checks: OptionChecks): string | undefined {
  let twoPass = false;
  let passlogfile = false;
  for (let i = 0; i < options.length; i++) {
    const tok = options[i]!;
    // an empty argument names no file (ffmpeg cannot open ''); clients send it for `null` items
    if (tok === '') continue;
    if (!tok.startsWith('-') || tok === '-') {
      const why = checks.output(tok);
      if (why) return `'${tok}' would be an output: ${why}`;
      continue;
    }
    if (tok.startsWith('-/')) return `${tok}: option values from files are not allowed`;
    // stream specifiers (`-c:v`, `-filter:a:0`) do not change what the option does
    const name = tok.slice(1).split(':')[0]!;
    if (isFlag(name)) {
      const refused = REFUSED_FLAGS.get(name);
      if (refused) return refused;
      continue;
    }
    const refused = REFUSED_OPTIONS.get(name);
    if (refused) return `-${name}: ${refused}`;
    const value = options[++i];
    if (value === undefined) break;
    const why = checkValue(name, value, checks);
    if (why) return `-${name} ${value}: ${why}`;
    if (name === 'pass' || (name === 'flags' && /pass[12]/.test(value))) twoPass = true;
    if (name === 'passlogfile') passlogfile = true;
  }
  // without -passlogfile, 2-pass statistics go to ffmpeg2pass-*.log (x264: x264_2pass.log) in the working directory
  if (twoPass && !passlogfile) return '2-pass encoding needs -passlogfile inside the disk folder (the default file is in the working directory)';
  return undefined;
}

function checkValue(name: string, value: string, checks: OptionChecks): string | undefined {
  if (name === 'i') return checks.input(value);
  if (name === 'dump_attachment' && value === '') return 'an attachment must be given a file name';
  if (FILE_OPTIONS.has(name)) return checks.output(value);
  if (RELATIVE_OPTIONS.has(name)) return checks.relative(value);
  if (FILTER_OPTIONS.has(name)) return checkGraph(value, checks);
  if (PARAMS_OPTIONS.has(name)) return checkParams(value, checks);
  if (READ_OPTIONS.has(name) || TEXT_OPTIONS.has(name)) return undefined;
  return looksLikePath(value) ? checks.output(value) : undefined;
}

/** Files written by the filters of a graph are outputs. */
export function checkGraph(graph: string, checks: OptionChecks): string | undefined {
  const g = graphFiles(graph);
  if ('refused' in g) return g.refused;
  for (const f of g.files) {
    const why = checks.output(f);
    if (why) return why;
  }
  return undefined;
}

/** Files an encoder library writes are outputs; other values that look like paths are checked too. */
function checkParams(list: string, checks: OptionChecks): string | undefined {
  const p = paramFiles(list);
  if ('refused' in p) return p.refused;
  for (const f of p.writes) {
    const why = checks.output(f);
    if (why) return why;
  }
  for (const v of p.others) {
    const why = looksLikePath(v) ? checks.output(v) : undefined;
    if (why) return why;
  }
  return undefined;
}
