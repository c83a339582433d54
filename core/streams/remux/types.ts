/** One FLV tag: what RTMP carries as a message (type 8 audio, 9 video, 18 script data). */
export interface FlvTag {
  type: 8 | 9 | 18;
  /** ms, decode time (32-bit) */
  timestamp: number;
  /** FLV tag body (what RTMP carries as the message payload) */
  body: Buffer;
}

export type FlvClass = 'metadata' | 'audio-header' | 'video-header' | 'keyframe' | 'frame';

/** FLV codec ids (legacy header nibble). */
export const FLV_AUDIO_MP3 = 2;
export const FLV_AUDIO_AAC = 10;
export const FLV_VIDEO_AVC = 7;

/** What a tag is, read from its first bytes (legacy and enhanced-RTMP video headers alike). */
export function classifyFlv(tag: FlvTag): FlvClass {
  const b = tag.body;
  if (tag.type === 18) return 'metadata';
  if (b.length < 2) return 'frame';
  if (tag.type === 8) return (b[0] >> 4) === FLV_AUDIO_AAC && b[1] === 0 ? 'audio-header' : 'frame';
  if ((b[0] & 0x80) !== 0) {
    // enhanced RTMP: IsExHeader | FrameType(3) | PacketType(4); PacketType 0 is SequenceStart
    if ((b[0] & 0x0f) === 0) return 'video-header';
    return ((b[0] >> 4) & 7) === 1 ? 'keyframe' : 'frame';
  }
  if (b[1] === 0 && ((b[0] & 0x0f) === FLV_VIDEO_AVC || (b[0] & 0x0f) === 12)) return 'video-header';
  return (b[0] >> 4) === 1 && b[1] !== 2 ? 'keyframe' : 'frame';
}
