import { createServiceRef } from '../../sdk/index.ts';

/*
 * The graphql plugin's contract for other plugins (and vendors): schema contributions.
 * The GraphQL API (`POST /api/graph/query`, reference 15) is composed, not central: the `graphql`
 * plugin owns the base schema (scalars Time, Any, Map, Uint64, MetricsResponseValue; enums; `ping`)
 * and every plugin that wants a field provides a contribution here. A plugin that is not loaded
 * contributes nothing. Resolvers call the same services as the REST handlers.
 */

/** What a resolver gets besides its parent and arguments. */
export interface GraphqlContext {
  /** Who asked (set by the auth plugin), as on the REST request. */
  readonly auth?: { user: string; via: string };
}

/** A field's arguments, as graphql-js passes them (coerced to the SDL's types). */
export type GraphqlArgs = Readonly<Record<string, unknown>>;

/**
 * A field resolver: `(parent, args, context, info)` to the value (or a promise); `info` is
 * graphql-js' GraphQLResolveInfo for those who look at the selection. Throwing gives the caller
 * a GraphQL error for that field (status 200, `errors` in the body) and `null` there. A resolver
 * may name narrower types for its parameters (`args: { id: string }`): the SDL says what comes.
 */
export type GraphqlResolver = {
  resolve(parent: unknown, args: GraphqlArgs, context: GraphqlContext, info: unknown): unknown;
}['resolve'];

/** One parent that selected a batch-loaded field (`obj`), with the field's arguments (`params`). */
export interface GraphqlLoaderQuery {
  readonly obj: unknown;
  readonly params: GraphqlArgs;
}

/**
 * A batch loader for a field of an object type: called once per request with every parent that
 * selected the field (`obj`) and its arguments (`params`); returns one value per query, in order.
 * Use it where resolving per parent would repeat the same work (a list of 1,000 processes). Like
 * a resolver it may name narrower types (`queries: readonly { obj: { n: number } }[]`).
 */
export type GraphqlLoader = {
  load(queries: readonly GraphqlLoaderQuery[], context: GraphqlContext): Promise<readonly unknown[]>;
}['load'];

/** One plugin's part of the schema. */
export interface GraphqlContribution {
  /** Who contributes (shown in errors about the composed schema). */
  name: string;
  /**
   * SDL: `extend type Query { ... }` (or `extend type Mutation`) plus the contribution's own types.
   * The base scalars and enums may be used; a type name taken twice stops the boot.
   */
  typeDefs: string;
  /** Resolvers by type then field, e.g. `{ Query: { vendorHello: () => 'hi' } }`. */
  resolvers?: Readonly<Record<string, Readonly<Record<string, GraphqlResolver>>>>;
  /** Batch loaders by type then field (see GraphqlLoader). */
  loaders?: Readonly<Record<string, Readonly<Record<string, GraphqlLoader>>>>;
}

/**
 * Where plugins provide their schema contributions (many providers); the `graphql` plugin
 * composes the base schema with all of them at boot.
 *
 * @example
 * provides: [graphqlSchemaRef],
 * setup(ctx) {
 *   ctx.provide(graphqlSchemaRef, {
 *     name: 'vendor',
 *     typeDefs: 'extend type Query { vendorHello(name: String!): String! }',
 *     resolvers: { Query: { vendorHello: (_parent, args) => `hello ${args.name}` } },
 *   });
 * }
 */
export const graphqlSchemaRef = createServiceRef<GraphqlContribution, true>('graphql.schema', { multiple: true });
