import { isAbsolute, resolve } from 'node:path';
import { atOrBeneath } from './confine/paths.ts';

/*
 * Filters that load a shared library into ffmpeg (issue 43.1). Any of them would run code from a
 * file into a child; a client could name one it uploaded. They are refused at create unless the
 * operator names a module folder (`encoder.confinement.modules`, config file only); then a module
 * given by path must lie beneath it, and a bare name is searched there (LADSPA_PATH, LV2_PATH and
 * FREI0R_PATH of every child, core/process/confine). The kernel holds too: the folders a child or
 * the API writes are mounted noexec for children, so a library there cannot be mapped as code.
 * Scripts that hold a filtergraph (`-filter_script`, `-filter_complex_script`, the lavfi device's
 * `-graph_file`, and ffmpeg 7's `-/option FILE`) are refused, as their text cannot be checked at
 * create.
 */

export const MODULE_FILTERS = ['ladspa', 'lv2', 'frei0r', 'frei0r_src'] as const;

// a filter's name in a graph: after the start or a separator, before its arguments or another separator
const FILTER = /(?:^|[\s,;\]])(ladspa|lv2|frei0r_src|frei0r)\s*(?=$|[\s=,;[@])/;
const SCRIPT_OPTION = /^-(?:filter_script|filter_complex_script|graph_file)(?::|$)|^-\//;

/** ffmpeg's quoting (`'...'`) and escapes (`\x`) taken out, as its graph parser does. */
function unquote(arg: string): string {
  return arg.replace(/\\(.)/g, '$1').replace(/'/g, '');
}

/**
 * Why these arguments may not run (a module filter without a module folder, a module path outside
 * it, a filter script), or undefined. `modules` is the absolute module folder, or '' for none.
 */
export function moduleProblem(args: readonly string[], modules: string): string | undefined {
  for (const raw of args) {
    if (SCRIPT_OPTION.test(raw)) return `the option '${raw}' reads a filtergraph from a file, which cannot be checked: write the graph in the option instead`;
    // without a quote or an escape the argument is as ffmpeg reads it; and a module filter's name
    // is in it, or FILTER cannot match (most arguments: every stored process is checked at start)
    const arg = raw.includes('\\') || raw.includes("'") ? unquote(raw) : raw;
    if (!arg.includes('ladspa') && !arg.includes('lv2') && !arg.includes('frei0r')) continue;
    const m = FILTER.exec(arg);
    if (!m) continue;
    if (!modules) {
      return `the filter '${m[1]}' loads a library into the encoder and is refused; the operator can allow it with a module folder (encoder.confinement.modules in the config file)`;
    }
    // lv2 names plugins by URI and finds them through LV2_PATH only; ladspa's and frei0r's
    // arguments with a slash are paths (relative ones to the working directory)
    if (m[1] === 'lv2') continue;
    const own = arg.slice(m.index + m[0].length).split(/[,;[]/, 1)[0]!;
    for (const value of own.split(/[=:]/)) {
      if (value.includes('/') && (!isAbsolute(value) || !atOrBeneath(modules, resolve(modules, value)))) {
        return `the filter '${m[1]}' may load modules only from the module folder ${modules} (encoder.confinement.modules), not '${value}'`;
      }
    }
  }
  return undefined;
}
