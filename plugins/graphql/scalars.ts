import { GraphQLError, Kind, valueFromASTUntyped, type ValueNode } from 'graphql';

/*
 * The reference's scalars (section 15) as serialize / parseValue / parseLiteral triples, which
 * mercurius installs on the SDL's scalar declarations (schema.ts).
 */

type Vars = Record<string, unknown> | null | undefined;

const untyped = (ast: ValueNode, vars?: Vars) => valueFromASTUntyped(ast, vars ?? undefined);

/** RFC 3339 with seconds precision, as the reference's Time prints (`2026-01-02T03:04:05Z`). */
export function rfc3339(unixSeconds: number): string {
  return new Date(Math.trunc(unixSeconds) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

const time = (v: unknown): string => {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return rfc3339(v);
  if (v instanceof Date) return rfc3339(Math.floor(v.getTime() / 1000));
  throw new GraphQLError('Time must be an RFC 3339 string');
};

const uint64 = (v: unknown): number => {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new GraphQLError('Uint64 must be a number');
  return Math.max(0, Math.trunc(n));
};

const map = (v: unknown): Record<string, unknown> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new GraphQLError('Map must be an object');
  return v as Record<string, unknown>;
};

/** Resolvers for the scalars of the base schema, by scalar name. */
export const scalarResolvers = {
  Time: {
    serialize: time,
    parseValue: time,
    parseLiteral: (ast: ValueNode) => {
      if (ast.kind !== Kind.STRING) throw new GraphQLError('Time must be an RFC 3339 string');
      return ast.value;
    },
  },
  Any: {
    serialize: (v: unknown) => v,
    parseValue: (v: unknown) => v,
    parseLiteral: untyped,
  },
  Map: {
    serialize: map,
    parseValue: map,
    parseLiteral: (ast: ValueNode, vars?: Vars) => map(untyped(ast, vars)),
  },
  Uint64: {
    serialize: uint64,
    parseValue: uint64,
    parseLiteral: (ast: ValueNode) => {
      if (ast.kind !== Kind.INT) throw new GraphQLError('Uint64 must be an integer');
      return uint64(ast.value);
    },
  },
  /** `[unix_seconds, value]`: output only. */
  MetricsResponseValue: {
    serialize: (v: unknown) => {
      if (!Array.isArray(v) || v.length !== 2) throw new GraphQLError('MetricsResponseValue must be [ts, value]');
      return [Math.trunc(Number(v[0])), Number.isFinite(Number(v[1])) ? Number(v[1]) : 0];
    },
    parseValue: (v: unknown) => v,
    parseLiteral: untyped,
  },
};
