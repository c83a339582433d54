import { PUBLIC, type HttpScope } from '../../sdk/index.ts';
import { authErrors } from './errors.ts';
import { JwtBody, JwtRefreshBody, LoginBody } from './schema.ts';
import type { AuthService } from './service.ts';

/**
 * `POST /api/login` and `GET /api/login/refresh` (reference 3.4). Both are public for the kernel:
 * login checks credentials itself (no IP lists, as in the reference), refresh wants a refresh
 * token, which the authorize tap would refuse as an access token.
 */
export async function loginRoutes(http: HttpScope, auth: AuthService): Promise<void> {
  // an identity-provider login may come with an empty body (even with a JSON content type);
  // leave the judging to the validators instead of answering "empty body"
  http.removeContentTypeParser('application/json');
  http.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(authErrors.invalidJson((err as Error).message), undefined);
    }
  });

  http.post('/api/login', {
    config: PUBLIC,
    // the body is read by the validators (an identity-provider login has none): the schema
    // documents the local login but does not refuse other shapes
    validatorCompiler: () => () => true,
    schema: {
      summary: 'Retrieve an access and a refresh token',
      description: 'Log in with username and password, or with an identity-provider token as Bearer.',
      tags: ['v16.7.2'],
      security: [],
      body: LoginBody,
      response: { 200: JwtBody },
    },
  }, async (req) => auth.login(req));

  http.get('/api/login/refresh', {
    config: PUBLIC,
    schema: {
      summary: 'Retrieve a new access token with the refresh token as Bearer',
      tags: ['v16.7.2'],
      security: [],
      response: { 200: JwtRefreshBody },
    },
  }, async (req) => auth.refresh(req));
}
