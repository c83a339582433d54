import { GraphQLError } from 'graphql';
import { ApiError } from '../../sdk/index.ts';

/*
 * Errors of the GraphQL API. A field's error travels in the response's `errors` (status 200);
 * a query refused before it runs (syntax, validation, depth, cost) is a 400 with `errors`. Each
 * carries `extensions.code` (the HTTP status the REST API would answer) and a stable `error` name.
 */

const err = (message: string, status: number, error: string, details: string[] = [message]) =>
  new GraphQLError(message, { extensions: { code: status, error, details } });

export const graphqlErrors = {
  unknownProcess: (id: string) => err('Unknown process ID', 404, 'GRAPHQL_UNKNOWN_PROCESS', [`unknown process: ${id}`]),
  playoutNotLoaded: () => err('playout is not loaded', 503, 'GRAPHQL_PLAYOUT_NOT_LOADED', ['the playout plugin is not loaded']),
  tooDeep: (depth: number, max: number) =>
    new GraphQLError(`query is nested ${depth} levels deep; at most ${max} are allowed`, { extensions: { code: 400, error: 'GRAPHQL_TOO_DEEP' } }),
  tooDeepIntrospection: (lists: number, max: number) =>
    new GraphQLError(`introspection passes through ${lists} nested lists; at most ${max} are allowed`, {
      extensions: { code: 400, error: 'GRAPHQL_TOO_DEEP' },
    }),
  tooComplex: (fields: number, max: number) =>
    new GraphQLError(`query selects ${fields} fields (aliases and fragments counted); at most ${max} are allowed`, {
      extensions: { code: 400, error: 'GRAPHQL_TOO_COMPLEX' },
    }),
  tooHeavy: (n: number, max: number) =>
    new GraphQLError(`query asks ${n} times for log, processes, metrics or probe (aliases and fragments counted); at most ${max} are allowed`, {
      extensions: { code: 400, error: 'GRAPHQL_TOO_COMPLEX' },
    }),
};

/** One error of a response as JSON: message, locations, path, extensions. */
export function errorJson(e: unknown): Record<string, unknown> {
  if (e instanceof GraphQLError) {
    const orig = e.originalError;
    // a service's ApiError (playout: unknown process or input, upstream failure) keeps its status
    if (orig instanceof ApiError) {
      return { ...e.toJSON(), extensions: { code: orig.status, error: orig.errorCode, details: orig.details } };
    }
    return e.toJSON() as unknown as Record<string, unknown>;
  }
  return { message: e instanceof Error ? e.message : String(e) };
}
