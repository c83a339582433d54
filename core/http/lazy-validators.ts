import { createRequire } from 'node:module';
import type { ValidatorFactory } from '@fastify/ajv-compiler';

/** ajv (about 1 MB of modules) loads with the first route that validates a request. */
const load = createRequire(import.meta.url);

type Compile = ReturnType<ValidatorFactory>;
type Route = Parameters<Compile>[0];
type Compiled = ReturnType<Compile>;
/** What fastify calls: ajv's function, its `errors` read after a `false`. */
type Lazy = ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/**
 * fastify's validator factory (ajv, as fastify builds it by default), compiling each route's
 * schema when that route first validates a request instead of while the app boots: the
 * compiles were about 0.1 s of the start-up (issue 29), for routes most runs never call.
 * A schema ajv refuses now fails that route's requests (500) instead of the boot. Header schemas
 * are compiled as they are written (fastify lowercases their keys only for its own compiler);
 * no route of the service has one. `compiled` counts the schemas compiled so far.
 * A value a schema of plain strings (`stringsOnly`: the process list's query, a path's `:id`)
 * accepts passes without ajv, which then loads only when something is refused or has another
 * schema: the first process list after a start no longer waits for ajv to load (issue 46.4).
 */
export class LazyValidators {
  #compiled = 0;
  #select: ValidatorFactory | undefined;

  get compiled(): number { return this.#compiled; }

  /** fastify's `schemaController.compilersFactory.buildValidator`. */
  readonly buildValidator: ValidatorFactory = (externalSchemas, ajvOptions) => {
    let compile: Compile | undefined;
    return (route: Route) => {
      let fn: Compiled | undefined;
      const first = () => {
        this.#select ??= (load('@fastify/ajv-compiler') as () => ValidatorFactory)();
        compile ??= this.#select(externalSchemas, ajvOptions);
        this.#compiled++;
        return compile(route);
      };
      const quick = route.httpPart === 'headers' ? undefined : stringsOnly(route.schema);
      const lazy: Lazy = (data, ctx) => {
        // what the simplest schemas accept is known without ajv; anything else is ajv's to judge (and word)
        if (fn === undefined && quick?.(data)) {
          lazy.errors = null;
          return true;
        }
        fn ??= first();
        const validate = fn as Lazy;
        const out = validate.schemaEnv ? validate(data, ctx) : validate(data);
        lazy.errors = validate.errors;
        return out;
      };
      // fastify hands ajv's functions the parent object, so that a root value can be replaced
      lazy.schemaEnv = true;
      return lazy as unknown as Compiled;
    };
  };
}

/** Keys of a schema that never refuse a value. */
const NOTES = new Set(['description', 'title', 'examples', '$comment']);
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const onlyNotes = (o: Record<string, unknown>, allowed: readonly string[]) => Object.keys(o).every((k) => allowed.includes(k) || NOTES.has(k));

/**
 * For an object schema whose properties are all plain strings (`{ type: 'string' }` and notes,
 * nothing else: no pattern, length, format, default or other keyword), a check that accepts exactly
 * what ajv accepts with the service's options (no coercion, no defaults, additional properties
 * allowed): an object, each listed property absent or a string, each required one present.
 * undefined for any other schema.
 */
export function stringsOnly(schema: unknown): ((data: unknown) => boolean) | undefined {
  if (!isRecord(schema) || schema.type !== 'object' || !isRecord(schema.properties)) return undefined;
  if (!onlyNotes(schema, ['type', 'properties', 'required'])) return undefined;
  const required = schema.required ?? [];
  if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) return undefined;
  const props = schema.properties;
  const names = Object.keys(props);
  if (!names.every((n) => { const p = props[n]; return isRecord(p) && p.type === 'string' && onlyNotes(p, ['type']); })) return undefined;
  return (data) => {
    if (!isRecord(data)) return false;
    for (const r of required as string[]) if (data[r] === undefined) return false;
    for (const n of names) {
      const v = data[n];
      if (v !== undefined && typeof v !== 'string') return false;
    }
    return true;
  };
}
