import type { TSchema } from '@sinclair/typebox';

/** A leaf of the config schema: a dotted path and its schema. */
export interface ConfigLeaf {
  path: string;
  schema: TSchema;
}

/** Every leaf path of an object schema (records and arrays are leaves). */
export function configLeaves(schema: TSchema, prefix = ''): ConfigLeaf[] {
  const out: ConfigLeaf[] = [];
  const props = (schema as { properties?: Record<string, TSchema> }).properties;
  if (schema.type !== 'object' || !props) return [{ path: prefix, schema }];
  for (const [key, sub] of Object.entries(props)) {
    out.push(...configLeaves(sub, prefix ? `${prefix}.${key}` : key));
  }
  return out;
}

/** The schema of a dotted key of an object schema, or undefined. */
export function schemaAt(schema: TSchema, path: string): TSchema | undefined {
  let cur: TSchema | undefined = schema;
  for (const part of path.split('.')) cur = (cur as { properties?: Record<string, TSchema> } | undefined)?.properties?.[part];
  return cur;
}

/** Reads a dotted path from an object. */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Writes a dotted path into an object, creating objects on the way. */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

/** Deep merge of plain objects: arrays and scalars from `patch` replace those of `base`. */
export function deepMerge<T>(base: T, patch: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(patch)) return (patch === undefined ? base : patch) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    out[k] = isPlainObject(out[k]) && isPlainObject(v) ? deepMerge(out[k], v) : v;
  }
  return out as T;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
