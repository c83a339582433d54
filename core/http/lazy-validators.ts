import { createRequire } from 'node:module';

/** What fastify hands a validator compiler for one part of one route. */
interface RouteSchema { schema: unknown; method: string; url: string; httpPart?: string }
/** A compiled validator as fastify calls it: false with `errors` set when the data is refused. */
type Validate = ((data: unknown) => unknown) & { errors?: unknown };
type ValidatorCompiler = (route: RouteSchema) => Validate;
/** fastify's `schemaController.compilersFactory.buildValidator` (the shape of `@fastify/ajv-compiler`'s pool). */
export type BuildValidator = (externalSchemas: unknown, options: unknown) => ValidatorCompiler;

const load = createRequire(import.meta.url);
/** One pool per process, as fastify keeps one per root instance: a reload reuses what was compiled. */
let pool: BuildValidator | undefined;

/**
 * fastify's own ajv validators, compiled when a route first validates a request rather than at
 * boot (issue 29): ajv is created, and a route's code generated, only for routes that are called,
 * so a service that answers a handful of routes does not hold the code of two hundred. The result
 * is the same function fastify would have compiled; its `errors` are copied after every call,
 * where fastify reads them. A schema ajv cannot compile fails at that first request (a 500 naming
 * the route) instead of at boot: the built-ins' schemas are compiled by their tests.
 */
export const lazyValidators: BuildValidator = (externalSchemas, options) => {
  let compiler: ValidatorCompiler | undefined;
  return (route) => {
    let fn: Validate | undefined;
    const lazy = ((data: unknown) => {
      if (!fn) {
        pool ??= (load('@fastify/ajv-compiler') as () => BuildValidator)();
        compiler ??= pool(externalSchemas, options);
        fn = compiler(route);
      }
      const result = fn(data);
      lazy.errors = fn.errors;
      return result;
    }) as Validate;
    return lazy;
  };
};
