export type { FlvTag, FlvClass } from './types.ts';
export { classifyFlv } from './types.ts';
export { FlvToTs, TS_OFFSET, PCR_DELAY } from './flv-to-ts.ts';
export { TsToFlv, PES_CAP } from '../../../sdk/index.ts';
