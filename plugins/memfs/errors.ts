import { ApiError } from '../../sdk/index.ts';

/** Errors of the memory filesystem, with stable codes. */
export const memfsErrors = {
  /** A single file larger than the whole filesystem. */
  tooBig: () => new ApiError(507, 'Insufficient Storage', ['File is too big'], 'MEMFS_FILE_TOO_BIG'),
  /** The write does not fit and `storage.memory.purge` is off. */
  full: () => new ApiError(507, 'Insufficient Storage', ['not enough space on device'], 'MEMFS_FULL'),
  linkTarget: (detail: string) => new ApiError(400, 'Failed to create symlink', [detail], 'MEMFS_LINK_TARGET'),
  /** Writes need basic auth but no plugin provides it: refuse rather than let anyone write. */
  authUnavailable: () => new ApiError(401, 'Unauthorized', ['basic auth for /memfs needs the auth plugin'],
    'MEMFS_AUTH_UNAVAILABLE', { 'WWW-Authenticate': 'basic realm=Restricted' }),
};
