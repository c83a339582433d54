import { Type, type HttpScope } from '../../sdk/index.ts';
import type { Users } from './users.ts';
import { DomainQuery, IamPolicy, IamUser, IamUserUpdate, NameParams } from './schema.ts';

const TAGS = ['iam'];
const BASE = '/api/v3/iam/user';

/**
 * `/api/v3/iam/user`, as the reference's successor answers: list (with `$anon` last), create (200
 * with the user), read, replace (the fields given), delete (200 "OK"), replace the policies (200
 * with them). Protected routes: only the API's login (the config file's user, the superuser)
 * reaches them until users log in themselves (the next floor). `?domain=` is read and not used yet.
 */
export function iamRoutes(http: HttpScope, users: Users): void {
  http.get(BASE, { schema: { summary: 'Every user ($anon last), secrets as ""', tags: TAGS, querystring: DomainQuery, response: { 200: Type.Array(IamUser) } } },
    async () => users.list());

  http.post(BASE, { schema: { summary: 'Add a user', tags: TAGS, querystring: DomainQuery, body: IamUser, response: { 200: IamUser } } },
    async (req) => users.create(req.body));

  http.get(`${BASE}/:name`, { schema: { summary: 'One user, secrets as ""', tags: TAGS, params: NameParams, querystring: DomainQuery, response: { 200: IamUser } } },
    async (req) => users.get(req.params.name));

  http.put(`${BASE}/:name`, {
    schema: { summary: 'Replace the fields given of a user ("" in place of a secret keeps it)', tags: TAGS, params: NameParams, querystring: DomainQuery, body: IamUserUpdate, response: { 200: IamUser } },
  }, async (req) => users.update(req.params.name, req.body ?? {}));

  http.put(`${BASE}/:name/policy`, {
    schema: { summary: 'Replace the policies of a user', tags: TAGS, params: NameParams, querystring: DomainQuery, body: Type.Array(IamPolicy, { maxItems: 10_000 }), response: { 200: Type.Array(IamPolicy) } },
  }, async (req) => users.setPolicies(req.params.name, req.body));

  http.delete(`${BASE}/:name`, { schema: { summary: 'Delete a user and its policies', tags: TAGS, params: NameParams, querystring: DomainQuery } },
    async (req, reply) => {
      await users.remove(req.params.name);
      return reply.type('application/json; charset=utf-8').send('"OK"');
    });
}
