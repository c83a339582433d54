import { SerializerSelector, type SerializerFactory, type SerializerCompiler, type Serializer } from '@fastify/fast-json-stringify-compiler';

/*
 * Why reloads grew the heap (issue 27): fastify compiles every response schema with
 * fast-json-stringify, which names each root schema `__fjs_root_<n>` from a process-wide counter,
 * so the generated source differs at every compile. V8 keeps every distinct `new Function` source
 * and its code in its eval compilation cache until a memory-reducing GC (which a busy service
 * rarely gets): about 0.85 MB per reload of the default plugins, for ever. Compiling each schema
 * once per process and handing the same function to every later app stops it; the functions are
 * pure (schema in, string out), so sharing them between apps is safe.
 */

/** Entries kept: far more than the built-ins' response schemas; a plugin minting schemas per boot cannot grow it without end. */
const MAX_ENTRIES = 4096;

/** Compiled serializers by schema content, kept across reloads (the service keeps one in `retained`). */
export class SerializerCache {
  readonly #compiled = new Map<string, Serializer>();
  readonly #factory: SerializerFactory = SerializerSelector();

  get size(): number { return this.#compiled.size; }

  /** fastify's `schemaController.compilersFactory.buildSerializer`. */
  readonly buildSerializer: SerializerFactory = (externalSchemas, serializerOpts) => {
    const compile = this.#factory(externalSchemas, serializerOpts);
    // a schema JSON cannot spell (a cycle) is compiled as fastify would, uncached
    let context: string;
    try { context = JSON.stringify([externalSchemas ?? null, serializerOpts ?? null]); } catch { return compile; }
    const now = (route: Parameters<SerializerCompiler>[0]): Serializer => {
      let key: string;
      try { key = `${context}\n${JSON.stringify(route.schema)}`; } catch { return compile(route); }
      const hit = this.#compiled.get(key);
      if (hit) return hit;
      const fn = compile(route);
      if (this.#compiled.size >= MAX_ENTRIES) this.#compiled.clear();
      this.#compiled.set(key, fn);
      return fn;
    };
    // fastify asks for every route's serializer while it boots; compiling them all then was about
    // a tenth of the start-up (issue 29): each is compiled when its route first answers instead
    const lazy: SerializerCompiler = (route) => {
      let fn: Serializer | undefined;
      return (data) => (fn ??= now(route))(data);
    };
    return lazy;
  };
}
