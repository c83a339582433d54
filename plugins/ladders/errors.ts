import { ApiError } from '../../sdk/index.ts';

/** Errors of the ladders API, with stable codes; `details` name the field. */
export const laddersErrors = {
  /** A field of a ladder or one of its rungs is out of its documented range (the detail names it). */
  invalid: (field: string, reason: string) => new ApiError(400, 'Bad Request', [`${field}: ${reason}`], 'LADDERS_INVALID'),
  /** A rung written as a name that is no preset. */
  unknownPreset: (field: string, name: string) => new ApiError(400, 'Bad Request',
    [`${field}: no preset '${name.slice(0, 40)}' (1080p, 720p, 480p, 360p, 240p, audio, source)`], 'LADDERS_UNKNOWN_PRESET'),
  /** No ladder with this id. */
  notFound: (id: string) => new ApiError(404, 'Not Found', [`no ladder '${id}'`], 'LADDERS_NOT_FOUND'),
  /** The ladder comes from the config file: change it there. */
  fromConfig: (id: string) => new ApiError(409, 'Conflict', [`ladder '${id}' is from the config file (ladders.ladders)`], 'LADDERS_FROM_CONFIG'),
  /** Another ladder is for this stream already (one ladder per exact stream name, one per pattern). */
  taken: (what: string, other: string) => new ApiError(409, 'Conflict', [`${what} has a ladder already: '${other}'`], 'LADDERS_TAKEN'),
  /** `ladders.max_ladders` ladders exist. */
  limit: (max: number) => new ApiError(429, 'Too Many Requests', [`at most ${max} ladders (ladders.max_ladders)`], 'LADDERS_LIMIT'),
  /** The ladder's process names what its maker (the caller) may not have it do: the engine's reason. */
  forbidden: (reason: string) => new ApiError(403, 'Forbidden', [`the ladder's process was refused: ${reason}`], 'LADDERS_FORBIDDEN'),
  /** The ladder was made by another user (or the operator): only its maker or a superuser replaces or deletes it. */
  notYours: (id: string) => new ApiError(403, 'Forbidden', [`ladder '${id}' was made by another user: only its maker or a superuser changes it`], 'LADDERS_NOT_YOURS'),
  /** The ladder's stream could not be made a process (e.g. `rtmp.enable` is off): the engine's reason. */
  process: (reason: string) => new ApiError(409, 'Conflict', [`the ladder's process was refused: ${reason}`], 'LADDERS_PROCESS'),
};
