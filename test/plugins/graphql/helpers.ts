import type { TestApp, TestResponse } from '../../helpers/app.ts';

/** POST /api/graph/query with a query (and variables), optionally with a token. */
export function gql(app: TestApp, query: string, variables?: Record<string, unknown>, token?: string): Promise<TestResponse> {
  return app.request('POST', '/api/graph/query', { body: { query, variables }, token });
}

/** The `data` of a query that must succeed without errors. */
export async function gqlData(app: TestApp, query: string, variables?: Record<string, unknown>): Promise<any> {
  const r = await gql(app, query, variables);
  if (r.status !== 200 || r.body.errors) throw new Error(`graphql: ${r.status} ${r.text}`);
  return r.body.data;
}

/** Unix seconds as the Time scalar prints them. */
export const time = (unix: number | string): string => new Date(Number(unix) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
