import { ApiError } from '../../sdk/index.ts';
import { PROCESS_TYPES } from './config-model.ts';

/** The process API's errors, with the messages of reference 4.4 and stable codes. */
export const processErrors = {
  notFound: () => new ApiError(404, 'Unknown process ID', ['unknown process'], 'PROCESS_NOT_FOUND'),
  /** The caller may not make this process (`httpHooksRef.processAccess`: an access plugin's policies). */
  forbidden: () => new ApiError(403, 'Forbidden', ['not allowed to write this process (its id and domain)'], 'PROCESS_FORBIDDEN'),
  /** The process's command names what its maker may not do (`httpHooksRef.processUse`: a stream, a file). */
  forbiddenUse: (reason: string) => new ApiError(403, 'Forbidden', [reason], 'PROCESS_FORBIDDEN_USE'),
  updateNotFound: (id: string) => new ApiError(404, 'Process not found', [id], 'PROCESS_NOT_FOUND'),
  unknownKey: () => new ApiError(404, 'Unknown process ID', ['unknown key'], 'PROCESS_METADATA_NOT_FOUND'),
  invalidConfig: (reason: string) => new ApiError(400, 'Invalid process config', [reason], 'PROCESS_INVALID'),
  cantUpdate: (reason: string) => new ApiError(400, "Process can't be updated", [reason], 'PROCESS_UPDATE_INVALID'),
  noInputOutput: () => new ApiError(400, 'At least one input and one output need to be defined', [], 'PROCESS_NO_IO'),
  unsupportedType: () => new ApiError(400, 'Unsupported process type',
    [`Supported process types are: ${PROCESS_TYPES.join(', ')}`], 'PROCESS_TYPE'),
  unknownCommand: () => new ApiError(400, 'Unknown command provided',
    ['Known commands are: start, stop, reload, restart'], 'PROCESS_UNKNOWN_COMMAND'),
  commandFailed: (reason: string) => new ApiError(400, 'Command failed', [reason], 'PROCESS_COMMAND_FAILED'),
  overBudget: (reason: string) => new ApiError(503, 'Service Unavailable',
    [`the machine is over the resource budget (${reason}); retry later`], 'PROCESS_OVER_BUDGET'),
  invalidKey: () => new ApiError(400, 'Invalid key', ['The key must not be of length 0'], 'PROCESS_METADATA_INVALID_KEY'),
};

/** Why a start is refused when `encoder.max_processes` processes already have order `start`. */
export const maxProcessesReason = (max: number) => `max. number of running processes (${max}) reached`;
