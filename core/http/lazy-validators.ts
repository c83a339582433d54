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
      const lazy: Lazy = (data, ctx) => {
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
