/** Errors of the relay, with stable codes the plugin shell maps to API statuses. */
export type RelayErrorCode = 'bad_image' | 'encode_failed' | 'stopped';

export class RelayError extends Error {
  readonly code: RelayErrorCode;

  constructor(code: RelayErrorCode, message: string) {
    super(message);
    this.name = 'RelayError';
    this.code = code;
  }
}
