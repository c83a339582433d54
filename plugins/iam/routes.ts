import { Type, type HttpScope } from '../../sdk/index.ts';
import type { Delegation } from './delegate.ts';
import type { Users } from './users.ts';
import { DomainQuery, IamPolicy, IamUser, IamUserUpdate, NameParams } from './schema.ts';

const TAGS = ['iam'];
const BASE = '/api/v3/iam/user';

/**
 * `/api/v3/iam/user`, as the reference's successor answers: list (with `$anon` last), create (200
 * with the user), read, replace (the fields given), delete (200 "OK"), replace the policies (200
 * with them). Superusers may all; a user that is no superuser reaches them through its `api`
 * policies and then sees and writes only the users its `iam` policies allow, within its own
 * rights (`delegate.ts`; the auth plugin has checked `read`/`write` of a one-user route's name).
 */
export function iamRoutes(http: HttpScope, users: Users, d: Delegation): void {
  http.get(BASE, { schema: { summary: 'Every user ($anon last), secrets as ""', tags: TAGS, querystring: DomainQuery, response: { 200: Type.Array(IamUser) } } },
    async (req) => {
      const caller = d.delegate(req);
      const all = users.list();
      return caller ? all.filter((u) => d.may(caller, 'read', u.name, req.query.domain)) : all;
    });

  http.post(BASE, { schema: { summary: 'Add a user', tags: TAGS, querystring: DomainQuery, body: IamUser, response: { 200: IamUser } } },
    async (req) => {
      const caller = d.delegate(req);
      if (caller) d.checkWrite(caller, { name: req.body.name, domain: req.query.domain, superuser: req.body.superuser, policies: req.body.policies ?? [] });
      return users.create(req.body);
    });

  http.get(`${BASE}/:name`, { schema: { summary: 'One user, secrets as ""', tags: TAGS, params: NameParams, querystring: DomainQuery, response: { 200: IamUser } } },
    async (req) => users.get(req.params.name));

  http.put(`${BASE}/:name`, {
    schema: { summary: 'Replace the fields given of a user ("" in place of a secret keeps it)', tags: TAGS, params: NameParams, querystring: DomainQuery, body: IamUserUpdate, response: { 200: IamUser } },
  }, async (req) => {
    const body = req.body ?? {};
    const caller = d.delegate(req);
    if (caller) {
      const q = { target: users.stored(req.params.name), domain: req.query.domain, superuser: body.superuser, policies: body.policies };
      d.checkWrite(caller, { ...q, name: req.params.name });
      if (body.name !== undefined && body.name !== req.params.name) d.checkWrite(caller, { ...q, name: body.name });
    }
    return users.update(req.params.name, body);
  });

  http.put(`${BASE}/:name/policy`, {
    schema: { summary: 'Replace the policies of a user', tags: TAGS, params: NameParams, querystring: DomainQuery, body: Type.Array(IamPolicy, { maxItems: 10_000 }), response: { 200: Type.Array(IamPolicy) } },
  }, async (req) => {
    const caller = d.delegate(req);
    if (caller) d.checkWrite(caller, { name: req.params.name, target: users.stored(req.params.name), domain: req.query.domain, policies: req.body });
    return users.setPolicies(req.params.name, req.body);
  });

  http.delete(`${BASE}/:name`, { schema: { summary: 'Delete a user and its policies', tags: TAGS, params: NameParams, querystring: DomainQuery } },
    async (req, reply) => {
      const caller = d.delegate(req);
      if (caller) d.checkWrite(caller, { name: req.params.name, target: users.stored(req.params.name), domain: req.query.domain });
      await users.remove(req.params.name);
      return reply.type('application/json; charset=utf-8').send('"OK"');
    });
}
