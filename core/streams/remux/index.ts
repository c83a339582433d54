export type { FlvTag, FlvClass } from './types.ts';
export { classifyFlv } from './types.ts';
export { FlvToTs, TS_OFFSET, PCR_DELAY } from './flv-to-ts.ts';
export { TsToFlv } from './ts-to-flv.ts';
export { PES_CAP } from './ts-demux.ts';
