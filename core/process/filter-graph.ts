/*
 * Filters that write or load files, found in a filter graph (`-vf`, `-filter_complex`, a lavfi
 * input). The graph is split on every ',' and ';' (quoted or not: more pieces than ffmpeg sees,
 * never fewer), and a writer's arguments must hold no quotes or escapes, so what is checked is
 * exactly what ffmpeg would open.
 */

interface Writer {
  /** Option names whose value is a file written. */
  keys: string[];
  /** Positions (0-based, among unnamed arguments) of the file argument. */
  positions: number[];
}

const WRITERS: Record<string, Writer> = {
  metadata: { keys: ['file'], positions: [5] },
  ametadata: { keys: ['file'], positions: [5] },
  signature: { keys: ['filename'], positions: [2] },
  vidstabdetect: { keys: ['result'], positions: [0] },
  psnr: { keys: ['stats_file', 'f'], positions: [0] },
  ssim: { keys: ['stats_file', 'f'], positions: [0] },
  ssim360: { keys: ['stats_file', 'f'], positions: [0] },
  xpsnr: { keys: ['stats_file', 'f'], positions: [0] },
  vmafmotion: { keys: ['stats_file'], positions: [0] },
  libvmaf: { keys: ['log_path'], positions: [1] },
};

/** Filters that load a shared library or plugin named by the caller: never allowed. */
const LOADERS = new Set(['ladspa', 'lv2', 'frei0r', 'frei0r_src']);

/** Each file a graph would write, or the reason the graph is refused. */
export function graphFiles(graph: string): { files: string[] } | { refused: string } {
  const files: string[] = [];
  for (const raw of graph.split(/[,;]/)) {
    const seg = raw.replace(/\[[^\]]*\]/g, '').trim();
    const eq = seg.indexOf('=');
    // ffmpeg reads the name as a token (quotes and escapes removed): so do we
    const name = (eq < 0 ? seg : seg.slice(0, eq)).replace(/['"\\\s]/g, '').replace(/@.*/, '');
    if (LOADERS.has(name)) return { refused: `the filter '${name}' is not allowed` };
    const w = WRITERS[name];
    if (!w || eq < 0) continue;
    const args = seg.slice(eq + 1);
    if (/['"\\]/.test(args)) return { refused: `quotes and escapes are not allowed in the arguments of the filter '${name}'` };
    let position = 0;
    for (const arg of args.split(':')) {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(arg);
      if (m) {
        if (w.keys.includes(m[1]!)) files.push(m[2]!);
      } else if (w.positions.includes(position++)) {
        files.push(arg);
      }
    }
  }
  return { files };
}
