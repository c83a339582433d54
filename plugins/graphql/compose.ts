import { buildSchema, type GraphQLSchema } from 'graphql';
import { BootError } from '../../sdk/index.ts';
import { type GraphqlContribution } from './api.ts';
import type { FieldGuard, GuardContext } from './guard.ts';
import { untrack, type TraceContext } from './result-cache.ts';
import { scalarResolvers } from './scalars.ts';
import { BASE_SDL } from './schema.ts';

type FieldMap = Record<string, Record<string, unknown>>;
type Fn = (...args: any[]) => unknown;

/** A contribution of this plugin whose resolvers record their reads for the answer cache. */
export interface TrackedContribution extends GraphqlContribution {
  tracked?: boolean;
}

/**
 * A resolver or loader that reads without recording it (any vendor's, about, log, ...) makes the
 * query's answer uncacheable; `ctxAt` is where its context argument is.
 */
function untracked(fn: Fn, ctxAt: number): Fn {
  return (...args: unknown[]) => {
    const ctx = args[ctxAt] as TraceContext | undefined;
    if (ctx) untrack(ctx);
    return fn(...args);
  };
}

/** A vendor's resolvers with its Query and Mutation fields guarded. */
function vendorRoots(from: GraphqlContribution['resolvers'], guard: FieldGuard): GraphqlContribution['resolvers'] {
  const out: Record<string, Record<string, Fn>> = {};
  for (const [type, fields] of Object.entries(from ?? {})) {
    out[type] = { ...(fields as Record<string, Fn>) };
    if (type !== 'Query' && type !== 'Mutation') continue;
    for (const [field, fn] of Object.entries(fields as Record<string, Fn>)) {
      out[type][field] = (...args: unknown[]) => {
        guard.check((args[2] ?? {}) as GuardContext, 'POST', `/api/graph/query/${field}`);
        return fn(...args);
      };
    }
  }
  return out;
}

/** What mercurius is registered with: one schema, its resolvers and loaders. */
export interface ComposedSchema {
  schema: GraphQLSchema;
  resolvers: FieldMap;
  loaders: FieldMap;
}

const pong = () => 'pong';

/**
 * The base schema extended by every contribution, checked at boot: a type declared twice, an
 * extension of an unknown type, or a field two contributions resolve stops the boot naming them.
 */
export function composeSchema(contributions: readonly TrackedContribution[], guard?: FieldGuard): ComposedSchema {
  const resolvers: FieldMap = { Query: { ping: pong }, Mutation: { ping: pong }, ...scalarResolvers };
  const loaders: FieldMap = {};
  const owners = new Map<string, string>([['Query.ping', 'graphql'], ['Mutation.ping', 'graphql']]);
  const add = (into: FieldMap, from: GraphqlContribution['resolvers' | 'loaders'], who: string, wrap?: (fn: Fn) => Fn) => {
    for (const [type, fields] of Object.entries(from ?? {})) {
      for (const [field, fn] of Object.entries(fields as Record<string, Fn>)) {
        const key = `${type}.${field}`;
        const before = owners.get(key);
        if (before) throw new BootError(`GraphQL field ${key} is resolved by both '${before}' and '${who}'`);
        owners.set(key, who);
        (into[type] ??= {})[field] = wrap ? wrap(fn) : fn;
      }
    }
  };
  for (const c of contributions) {
    // a vendor's root field is asked as POST /api/graph/query/<field> for an IAM user (guard.ts)
    const root = c.name === 'graphql' || !guard ? undefined : vendorRoots(c.resolvers, guard);
    add(resolvers, root ?? c.resolvers, c.name, c.tracked ? undefined : (fn) => untracked(fn, 2));
    add(loaders, c.loaders, c.name, c.tracked ? undefined : (fn) => untracked(fn, 1));
  }
  let schema: GraphQLSchema;
  try {
    schema = buildSchema([BASE_SDL, ...contributions.map((c) => c.typeDefs)].join('\n'));
  } catch (err) {
    const names = [...new Set(contributions.map((c) => c.name))].join(', ');
    throw new BootError(`GraphQL schema contributions (${names}) do not compose: ${(err as Error).message}`, { cause: err });
  }
  for (const key of owners.keys()) {
    const [type, field] = key.split('.') as [string, string];
    const t = schema.getType(type);
    if (!t || !('getFields' in t) || !(field in t.getFields())) {
      throw new BootError(`GraphQL contribution '${owners.get(key)}' resolves ${key}, which its typeDefs do not declare`);
    }
  }
  return { schema, resolvers, loaders };
}
