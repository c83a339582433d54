import type { ReadSections, SectionName } from '../../sdk/index.ts';
import type { ConfigData } from '../config/config-data.ts';

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/**
 * `ctx.sections`: frozen copies of the sections a plugin declared in `reads`. Reading any other
 * section throws, so a dependency on a setting cannot hide in a plugin's code (the type already
 * forbids it; this catches `as any` and plain JavaScript plugins).
 */
export function readSections(config: ConfigData, reads: readonly SectionName[], plugin: string): ReadSections<readonly SectionName[]> {
  const target: Record<string, unknown> = {};
  for (const key of reads) {
    if (!(key in config) || key === ('plugins' as string)) throw new Error(`plugin '${plugin}' reads an unknown config section '${key}'`);
    target[key] = deepFreeze(structuredClone(config[key]));
  }
  return new Proxy(Object.freeze(target) as ReadSections<readonly SectionName[]>, {
    get(t, key) {
      if (typeof key === 'string' && !(key in t)) {
        throw new Error(`plugin '${plugin}' reads config section '${key}' without declaring it in 'reads'`);
      }
      return Reflect.get(t, key);
    },
  });
}
