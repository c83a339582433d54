// sdk/errors.ts, not the index: root.ts (and so this file) also runs in every serving thread
import { ApiError, isApiError } from '../../sdk/errors.ts';

/**
 * The longest real path of a file written through the service: the kernel's PATH_MAX (4096, with
 * its NUL) less room for an upload's temporary name beside it. Deeper, the descriptor's path can
 * no longer be read back (the check of where a folder is), and a 2,000-level upload left its folders.
 */
export const MAX_PATH_BYTES = 4000;
/** The longest name of one file or folder (the kernel's NAME_MAX): longer, refused before a folder is made. */
export const MAX_NAME_BYTES = 255;

/** Errors of the disk filesystem, with stable codes. */
export const diskErrors = {
  /** A path (or a symlink on it) that resolves outside the disk root. */
  outside: (path: string) => new ApiError(403, 'Forbidden', [`${path} leads outside of the filesystem`], 'DISKFS_OUTSIDE_ROOT'),
  /** Files the service keeps for itself (config, database) when they live below the disk root. */
  reserved: (path: string) => new ApiError(403, 'Forbidden', [`${path} is reserved`], 'DISKFS_RESERVED'),
  full: () => new ApiError(507, 'Insufficient Storage', ['not enough space on device'], 'DISKFS_FULL'),
  tooBig: () => new ApiError(507, 'Insufficient Storage', ['File is too big'], 'DISKFS_FILE_TOO_BIG'),
  /** A path the kernel could not name again once made (its real path over PATH_MAX): refused before a folder is made. */
  tooLong: (path: string) => new ApiError(400, 'Bad Request', [`${path.slice(0, 256)}: the path is too long (at most ${MAX_PATH_BYTES} bytes with the disk's folder, ${MAX_NAME_BYTES} a name)`], 'DISKFS_PATH_TOO_LONG'),
  notAFile: (path: string) => new ApiError(400, 'Bad Request', [`${path} is a directory`], 'DISKFS_NOT_A_FILE'),
};

/** Maps a node error of a write to the interface's answer. */
export function writeError(err: unknown, path: string): ApiError {
  if (isApiError(err)) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return diskErrors.full();
  if (code === 'EISDIR') return diskErrors.notAFile(path);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return new ApiError(403, 'Forbidden', [`${path}: permission denied`], 'DISKFS_DENIED');
  if (code === 'ENOTDIR' || code === 'EEXIST') return new ApiError(400, 'Bad Request', [`${path}: a file is in the way`], 'DISKFS_WRITE');
  // the errno code, not the message: it names the server's own paths
  return new ApiError(400, 'Bad Request', [`${path}: ${code || (err as Error).message}`], 'DISKFS_WRITE');
}
