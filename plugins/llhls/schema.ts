import { Bool, ConfigErrorList, Int, Str, section, type ConfigErrors, type Static } from '../../sdk/index.ts';

/** The `llhls` section of the configuration, owned by this plugin (beyond the reference). */
export const LlhlsConfig = section({
  enable: [Bool(false), 'Serve every stream of the stream table as Low-Latency HLS at `/hls/<stream>/index.m3u8` (plugin `llhls`), packaged by the service itself.'],
  token: [Str(''), 'Token players must give on the playlist URL (`/hls/<stream>/index.m3u8?token=...`), else 401; parts and segments have random names only a playlist tells. Empty: none.'],
  target_duration_seconds: [Int(2, { minimum: 1, maximum: 10 }), 'Seconds a segment aims at: it is cut at the first keyframe after it (longer GOPs make longer segments).'],
  part_target_ms: [Int(300, { minimum: 100, maximum: 2000 }), 'Milliseconds a partial segment lasts at most (`PART-TARGET`); at most the target duration, and at least a few frame intervals of the streams.'],
  window_seconds: [Int(120, { minimum: 10, maximum: 3600 }), 'Seconds of segments a playlist keeps (a player may start this far back).'],
  max_stream_mbytes: [Int(64, { minimum: 1, maximum: 4096 }), 'MiB of segments one packaged stream keeps at most; beyond, the oldest leave the window first.'],
  max_streams: [Int(100, { minimum: 1, maximum: 10_000 }), 'Streams packaged at once; a request for one more is refused with 503 (`LLHLS_LIMIT`).'],
  dvr_window_seconds: [Int(7200, { minimum: 60, maximum: 604_800 }), 'How far back `/hls/<stream>/dvr.m3u8` reaches into the stream\'s recording (plugin `recordings`), in seconds.'],
  idle_seconds: [Int(30, { minimum: 5, maximum: 3600 }), 'Packaging of a stream stops this many seconds after the last request of its files, and its memory is given back.'],
});
export type LlhlsConfig = Static<typeof LlhlsConfig>;

/** The part target must fit in the target duration. */
export function validateLlhls(s: LlhlsConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  if (s.part_target_ms > s.target_duration_seconds * 1000) errs.add('part_target_ms', 'must not be longer than target_duration_seconds');
  return errs.map;
}
