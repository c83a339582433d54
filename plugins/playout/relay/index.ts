// The playout relay engine (the media half of the playout plugin): one Relay per `playout:` input.
export { Relay, type RelayOptions, type RelayPlaylist } from './relay.ts';
export type { SwitchResult } from './swap.ts';
export { RelayError, type RelayErrorCode } from './errors.ts';
export { paramsMismatch, describeParams, type StreamParams } from './stream-params.ts';
export { sourceArgs } from './source.ts';
