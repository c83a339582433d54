/*
 * Encoder private parameter lists (`-x264-params`, `-x265-params`, `-x264opts`, ...): `key=value`
 * pairs joined by ':', handed to the encoder library, some of which name files the library writes
 * (x264's 2-pass `stats`, `dump-yuv`, x265's `csv`, `analysis-save`...). Those are outputs.
 */

/** Options whose value is a `key=value:key=value` list for an encoder library. */
export const PARAMS_OPTIONS = new Set([
  'x264-params', 'x264opts', 'x265-params', 'svtav1-params', 'aom-params', 'kvazaar-params', 'xavs2-params', 'vvenc-params',
]);

/** Keys naming a file the library writes (x264 `param_parse`, x265 `x265_param_parse`, svt-av1, aom). */
const WRITE_KEYS = new Set([
  'stats', 'dump-yuv', 'opencl-clbin', 'csv', 'analysis-save', 'analysis-reuse-file', 'recon', 'stat-file',
  'fpf', 'pass-file', 'passlogfile',
]);

/** Keys naming a file the library reads: reading is allowed, as for inputs (reference 8.4). */
const READ_KEYS = new Set([
  'cqmfile', 'analysis-load', 'zonefile', 'lambda-file', 'scaling-list', 'dolby-vision-rpu', 'dhdr10-info', 'qpfile',
]);

/** One parameter as the library sees its name: x264 and x265 turn '_' into '-'. */
function keyOf(raw: string): string {
  return raw.trim().toLowerCase().replaceAll('_', '-');
}

export interface ParamFiles {
  /** Values the library writes to. */
  writes: string[];
  /** Values of other keys, for the caller's "looks like a path" check. */
  others: string[];
}

/**
 * The files a parameter list writes, or the reason it is refused. Quotes and backslashes are
 * refused: ffmpeg unescapes them (av_dict_parse_string) where `x264opts` does not, so a list with
 * them would not mean the same here and in the encoder.
 */
export function paramFiles(list: string): ParamFiles | { refused: string } {
  if (/['"\\]/.test(list)) return { refused: 'quotes and escapes in encoder parameters are not allowed' };
  const out: ParamFiles = { writes: [], others: [] };
  let pass = false;
  let stats = false;
  for (const pair of list.split(':')) {
    const eq = pair.indexOf('=');
    const key = keyOf(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : pair.slice(eq + 1).trim();
    // 'no'-prefixed names are the option negated: for a file option the file is named 'true' or 'false'
    const bare = key.startsWith('no-') ? key.slice(3) : key.startsWith('no') ? key.slice(2) : undefined;
    if (bare !== undefined && WRITE_KEYS.has(bare)) return { refused: `'${key}' makes the encoder write a file in the working directory` };
    if (key === 'pass') pass = true;
    if (WRITE_KEYS.has(key)) {
      if (value === '') return { refused: `'${key}' needs a file name inside the disk folder` };
      out.writes.push(value);
      if (key === 'stats') stats = true;
    } else if (!READ_KEYS.has(key) && value !== '') {
      out.others.push(value);
    }
  }
  // x264 and x265 write 2-pass statistics to x264_2pass.log / x265_2pass.log in the working directory
  if (pass && !stats) return { refused: "'pass' needs 'stats' naming a file inside the disk folder" };
  return out;
}
