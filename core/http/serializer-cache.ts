import { createRequire } from 'node:module';
import type { SerializerFactory, SerializerCompiler, Serializer } from '@fastify/fast-json-stringify-compiler';

/** fast-json-stringify (and the ajv it builds on) load at the first answer that needs a serializer. */
const load = createRequire(import.meta.url);

/*
 * Why reloads grew the heap (issue 27): fastify compiles every response schema with
 * fast-json-stringify, which names each root schema `__fjs_root_<n>` from a process-wide counter,
 * so the generated source differs at every compile. V8 keeps every distinct `new Function` source
 * and its code in its eval compilation cache until a memory-reducing GC (which a busy service
 * rarely gets): about 0.85 MB per reload of the default plugins, for ever. Compiling each schema
 * once per process and handing the same function to every later app stops it; the functions are
 * pure (schema in, string out), so sharing them between apps is safe. A route's serializer is
 * compiled when it first answers (issue 29: idle memory), so routes nobody calls cost nothing.
 */

/** Entries kept: far more than the built-ins' response schemas; a plugin minting schemas per boot cannot grow it without end. */
const MAX_ENTRIES = 4096;

/** Compiled serializers by schema content, kept across reloads (the service keeps one in `retained`). */
export class SerializerCache {
  readonly #compiled = new Map<string, Serializer>();
  #factory: SerializerFactory | undefined;

  get size(): number { return this.#compiled.size; }

  /** fastify's `schemaController.compilersFactory.buildSerializer`. */
  readonly buildSerializer: SerializerFactory = (externalSchemas, serializerOpts) => {
    let made: SerializerCompiler | undefined;
    const compile: SerializerCompiler = (route) => {
      this.#factory ??= (load('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => SerializerFactory }).SerializerSelector();
      made ??= this.#factory(externalSchemas, serializerOpts);
      return made(route);
    };
    // a schema JSON cannot spell (a cycle) is compiled as fastify would, uncached
    let context: string;
    try { context = JSON.stringify([externalSchemas ?? null, serializerOpts ?? null]); } catch { return compile; }
    // compiled at a route's first answer, not at boot (issue 29): most routes of a deployment never answer
    const cached: SerializerCompiler = (route) => {
      let fn: Serializer | undefined;
      return (data) => (fn ??= this.#compile(context, route, compile))(data);
    };
    return cached;
  };

  #compile(context: string, route: Parameters<SerializerCompiler>[0], compile: SerializerCompiler): Serializer {
    let key: string;
    try { key = `${context}\n${JSON.stringify(route.schema)}`; } catch { return compile(route); }
    const hit = this.#compiled.get(key);
    if (hit) return hit;
    const fn = compile(route);
    if (this.#compiled.size >= MAX_ENTRIES) this.#compiled.clear();
    this.#compiled.set(key, fn);
    return fn;
  }
}
