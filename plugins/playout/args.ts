/*
 * Pure helpers over a process's resolved arguments (what `preStart` gets): where each input's
 * options and address are, which input options belong to the relay, and the rewrite of a
 * `playout:` input into the relay's loopback socket.
 */

export const PREFIX = 'playout:';
/** An input that plays a stored playlist through a relay (`playlist:<name>`). */
export const PLAYLIST = 'playlist:';

/** Inputs read through a relay: `playout:<url>` and `playlist:<name>`. */
export function relayed(address: string): boolean {
  return address.startsWith(PREFIX) || address.startsWith(PLAYLIST);
}

/** One input of the argument list. */
export interface LocatedInput {
  /** Input ID as configured. */
  id: string;
  /** Index of the input's first option in the argument list. */
  start: number;
  /** Index of its `-i`; the address follows. */
  at: number;
  options: string[];
  address: string;
}

/**
 * Finds every input in `args` (built as `<global> (<options> -i <address>)... <outputs>`, maybe
 * with arguments prepended by other preStart taps), given the inputs' IDs and option counts
 * (placeholders never change a count). Undefined when the list does not have that shape.
 */
export function locateInputs(args: readonly string[], inputs: readonly { id: string; options: readonly unknown[] }[]): LocatedInput[] | undefined {
  for (let g = 0; g < args.length; g++) {
    const found: LocatedInput[] = [];
    let pos = g;
    for (const io of inputs) {
      const start = pos;
      pos += io.options.length;
      if (args[pos] !== '-i' || pos + 1 >= args.length) break;
      found.push({ id: io.id, start, at: pos, options: args.slice(start, pos), address: args[pos + 1]! });
      pos += 2;
    }
    if (found.length === inputs.length) return found;
  }
  return undefined;
}

/** Input options that take no value. */
const FLAGS = new Set(['-re', '-noautorotate', '-autorotate', '-accurate_seek', '-noaccurate_seek']);
/**
 * Input options that stay with the process's own ffmpeg: they are about decoding what the relay
 * sends (decoder choice, hardware decoding, queue size, timestamp offsets). Every other input
 * option (format, protocol options, `-re`, timeouts, ...) says how to read the source: the relay's.
 */
const PROCESS_SIDE = /^-(hwaccel(_device|_output_format)?|c|codec|vcodec|acodec|scodec|thread_queue_size|itsoffset|itsscale)(:.*)?$/;

/** The user's input options split between the relay (reading the source) and the process (decoding). */
export function splitOptions(options: readonly string[]): { relay: string[]; process: string[] } {
  const relay: string[] = [];
  const proc: string[] = [];
  for (let i = 0; i < options.length; i++) {
    const o = options[i]!;
    const pair = FLAGS.has(o) || !o.startsWith('-') || i + 1 >= options.length ? [o] : [o, options[++i]!];
    (PROCESS_SIDE.test(o) ? proc : relay).push(...pair);
  }
  return { relay, process: proc };
}

/** What replaces one input: the relay's socket, read as MPEG-TS. */
export function relayInput(processOptions: readonly string[], port: number): string[] {
  return [...processOptions, '-f', 'mpegts', '-i', `tcp://127.0.0.1:${port}`];
}

/** What replaces one input when playout is disabled: the URL behind `playout:`, read directly. */
export function directInput(input: LocatedInput): string[] {
  return [...input.options, '-i', input.address.slice(PREFIX.length)];
}

/** `args` with each located input's options and address replaced (later inputs first, so indexes hold). */
export function replaceInputs(args: readonly string[], changes: readonly { input: LocatedInput; with: readonly string[] }[]): string[] {
  const out = [...args];
  for (const c of [...changes].sort((a, b) => b.input.start - a.input.start)) {
    out.splice(c.input.start, c.input.at + 2 - c.input.start, ...c.with);
  }
  return out;
}
