/**
 * Typed references to services. A plugin provides a service under a ref and
 * other plugins (or the core) declare the ref in their `deps` to receive it.
 */

/** A reference to a service of type `T`; `M` is true when many plugins may provide it. */
export interface ServiceRef<T, M extends boolean = false> {
  readonly id: string;
  readonly multiple: M;
  readonly optional: boolean;
  /** Phantom field carrying the service type; never set at run time. */
  readonly __type?: T;
}

/** The same ref, but resolving to `undefined` when nobody provides it. */
export interface OptionalServiceRef<T> extends ServiceRef<T, false> {
  readonly optional: true;
}

/**
 * Creates a typed service ref.
 *
 * @example
 * export const clockRef = createServiceRef<{ now(): number }>('vendor.clock');
 * export const fsRef = createServiceRef<FilesystemService, true>('fs', { multiple: true });
 */
export function createServiceRef<T, M extends boolean = false>(
  id: string,
  opts?: { multiple?: M },
): ServiceRef<T, M> {
  return Object.freeze({ id, multiple: (opts?.multiple ?? false) as M, optional: false });
}

/**
 * Marks a single-provider ref as optional for a consumer.
 *
 * @example
 * deps: { basicAuth: optional(basicAuthRef) } // ctx.deps.basicAuth may be undefined
 */
export function optional<T>(ref: ServiceRef<T, false>): OptionalServiceRef<T> {
  return Object.freeze({ id: ref.id, multiple: false, optional: true }) as OptionalServiceRef<T>;
}

/** Anything that may stand in a `deps` map. */
export type AnyServiceRef = ServiceRef<unknown, boolean>;
/** The `deps` of a plugin definition: names to refs. */
export type DepsMap = Record<string, AnyServiceRef>;

/** The resolved value for one ref: arrays for multi refs, `T | undefined` for optional ones. */
export type ResolvedRef<R> = R extends ServiceRef<infer T, true>
  ? readonly T[]
  : R extends OptionalServiceRef<infer T>
    ? T | undefined
    : R extends ServiceRef<infer T, false>
      ? T
      : never;

/** What `ctx.deps` looks like for a deps map. */
export type ResolvedDeps<D extends DepsMap> = { readonly [K in keyof D]: ResolvedRef<D[K]> };
