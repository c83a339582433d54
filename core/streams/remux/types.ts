/** What the remux's two directions share: the FLV tag and its class (the SDK's toolkit holds them). */
import { FLV_CODEC } from '../../../sdk/index.ts';

export { classifyFlv, type FlvTag } from '../../../sdk/index.ts';
import type { FlvPacket } from '../../../sdk/index.ts';

export type FlvClass = FlvPacket['kind'];

/** FLV codec ids (legacy header nibble). */
export const FLV_AUDIO_MP3 = FLV_CODEC.mp3;
export const FLV_AUDIO_AAC = FLV_CODEC.aac;
export const FLV_VIDEO_AVC = FLV_CODEC.avc;
