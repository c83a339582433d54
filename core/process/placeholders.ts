import type { PlaceholderContext, PlaceholderRegistry, PlaceholderRun, PlaceholderSection } from '../../sdk/index.ts';

/*
 * Placeholder substitution (reference 8.1-8.2): `{name}`, `{name^C}` (escape C in the value),
 * `{name,key=value,...}` (fill `{key}` slots of a registered template). Unknown names stay as
 * written. One pass per field, so a value that itself looks like a placeholder stays literal.
 */

const PATTERN = /\{([a-z]+(?::[0-9A-Za-z]+)?)(?:\^(.))?(?:,([^}]*))?\}/gs;
const SLOT = /\{([^{}]+)\}/g;

/** The values of the built-in placeholders for one field. */
export interface Vars {
  processid: string;
  reference: string;
  inputid?: string;
  outputid?: string;
}

/** Where a field sits: which built-ins and which registered placeholders apply there. */
export interface Where {
  /** Built-in names substituted here. */
  builtins: readonly (keyof Vars)[];
  /** Registry context for plugin placeholders; none means no plugin placeholder applies. */
  context?: PlaceholderContext;
  section: PlaceholderSection;
}

/** Escapes `c` in `value` the way ffmpeg filter arguments need it (reference 8.1). */
export function escape(value: string, c: string): string {
  let v = value;
  if (c !== '\\') v = v.split('\\').join('\\\\\\');
  return v.split(c).join('\\\\' + c);
}

function unescapeParam(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

function params(text: string | undefined, vars: Vars): Map<string, string> {
  const out = new Map<string, string>();
  if (!text) return out;
  for (const pair of text.split(',')) {
    const i = pair.indexOf('=');
    if (i <= 0) continue;
    let value = unescapeParam(pair.slice(i + 1));
    for (const k of ['processid', 'reference', 'inputid', 'outputid'] as const) {
      if (vars[k] !== undefined) value = value.split('$' + k).join(vars[k]!);
    }
    out.set(unescapeParam(pair.slice(0, i)), value);
  }
  return out;
}

/** Substitutes the placeholders allowed at `where` in `text`; `run` is the child's run when one is about to start. */
export function substitute(text: string, where: Where, vars: Vars, registry: PlaceholderRegistry, run?: PlaceholderRun): string {
  if (!text.includes('{')) return text;
  // only up to the last `}`: after it no placeholder can end, and each `{` there scanned the rest
  // of the text for one (`{a,` x 40,000 took 9 s)
  const end = text.lastIndexOf('}') + 1;
  return beforeLastBrace(text, end).replace(PATTERN, (whole, name: string, esc: string | undefined, paramText: string | undefined) => {
    let value: string;
    if ((where.builtins as readonly string[]).includes(name)) {
      value = vars[name as keyof Vars] ?? '';
    } else {
      const def = where.context ? registry.get(name) : undefined;
      if (!def || !def.contexts.includes(where.context!)) return whole;
      const p = params(paramText, vars);
      value = def.value(where.section, run).replace(SLOT, (slot, key: string) => p.get(key) ?? def.defaults?.[key] ?? slot);
    }
    return esc === undefined ? value : escape(value, esc);
  }) + text.slice(end);
}

/** The text up to `end` (the index after its last `}`). */
export const beforeLastBrace = (text: string, end = text.lastIndexOf('}') + 1): string => (end === text.length ? text : text.slice(0, end));

const IDS: readonly (keyof Vars)[] = ['processid', 'reference'];

/** The places of a process config, in the order the reference substitutes them. */
export const WHERE = {
  global: { builtins: [], context: 'global', section: 'global' },
  inputId: { builtins: IDS, section: 'input' },
  inputAddress: { builtins: ['inputid', ...IDS], context: 'address', section: 'input' },
  inputOptions: { builtins: ['inputid', ...IDS], context: 'options', section: 'input' },
  outputId: { builtins: IDS, section: 'output' },
  outputAddress: { builtins: ['outputid', ...IDS], context: 'address', section: 'output' },
  outputOptions: { builtins: ['outputid', ...IDS], context: 'options', section: 'output' },
  cleanup: { builtins: ['outputid', ...IDS], section: 'output' },
} as const satisfies Record<string, Where>;
