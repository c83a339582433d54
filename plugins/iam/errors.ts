import { ApiError } from '../../sdk/index.ts';

/** Errors of the IAM API, with stable codes; `details` name the field or the user. */
export const iamErrors = {
  /** A field of a user or one of its policies is out of its documented range (the detail names it). */
  invalid: (field: string, reason: string) => new ApiError(400, 'Bad Request', [`${field}: ${reason}`], 'IAM_INVALID'),
  /** A user of this name exists (the successor answers 400 too). */
  exists: (name: string) => new ApiError(400, 'Bad Request', [`user '${name}' exists`], 'IAM_USER_EXISTS'),
  /** The name is the config file's API user (the superuser) or `$anon`: not a stored user. */
  reserved: (name: string) => new ApiError(400, 'Bad Request', [`'${name}' is reserved (the config file's API user, or $anon)`], 'IAM_RESERVED'),
  /** No user of this name. */
  notFound: (name: string) => new ApiError(404, 'Not Found', [`no user '${name.slice(0, 64)}'`], 'IAM_NOT_FOUND'),
  /** `iam.max_users` users exist. */
  limit: (max: number) => new ApiError(429, 'Too Many Requests', [`at most ${max} users (iam.max_users)`], 'IAM_LIMIT'),
};
