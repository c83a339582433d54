import { ApiError, httpErrors } from '../../sdk/index.ts';

/* The auth plugin's errors, with stable AUTH_* codes; bodies follow the reference (section 3). */

export const authErrors = {
  /** Missing, malformed, expired or misused bearer token (reference 3.3). */
  invalidToken: () => httpErrors.unauthorized(['Missing or invalid JWT token'], 'AUTH_INVALID_TOKEN'),
  /** A validator recognised the login but refused it (reference 3.4). */
  invalidCredentials: (reason: string) =>
    new ApiError(401, 'Unauthorized', [`Invalid authorization credentials: ${reason}`], 'AUTH_INVALID_CREDENTIALS'),
  /** No validator recognised the login request. */
  missingCredentials: () => httpErrors.badRequest('Bad Request', ['Missing authorization credentials'], 'AUTH_MISSING_CREDENTIALS'),
  invalidJson: (why: string) => new ApiError(400, 'Invalid JSON', [why], 'AUTH_INVALID_JSON'),
  /** Too many login attempts of one address waiting for their turn. */
  tooManyAttempts: () => new ApiError(429, 'Too Many Requests', ['Too many login attempts from this address; retry later'], 'AUTH_TOO_MANY_ATTEMPTS'),
  /** Too many Basic credentials of one address waiting for their turn (`fail_max_pending`). */
  tooManyBasicAttempts: () => new ApiError(429, 'Too Many Requests', ['Too many authorization attempts from this address; retry later'], 'AUTH_BASIC_TOO_MANY_ATTEMPTS'),
  /** HTTP Basic (reference 3.7). */
  basicUnauthorized: () =>
    new ApiError(401, 'Unauthorized', ['Unauthorized'], 'AUTH_BASIC_UNAUTHORIZED', { 'WWW-Authenticate': 'Basic realm=Restricted' }),
  /** A user's right Basic password (the iam plugin) for a write its `fs` policies do not allow. */
  basicForbidden: (reason: string) => new ApiError(403, 'Forbidden', [reason], 'AUTH_BASIC_FORBIDDEN'),
  basicMalformed: () => httpErrors.badRequest('Bad Request', ['Invalid basic authorization header'], 'AUTH_BASIC_MALFORMED'),
};
