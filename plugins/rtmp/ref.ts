import { createServiceRef } from '../../sdk/index.ts';

/** One stream being published, as the plugin reports it. */
export interface RtmpChannelInfo {
  /** The channel key, e.g. `/live/abc.stream`. */
  name: string;
  /** The publisher's connection id and address. */
  publisher: { id: string; remote: string };
  players: number;
  /** FLV codec ids or FourCC numbers of the codec headers seen (0 = none yet). */
  videoCodec: number;
  audioCodec: number;
  /** Unix milliseconds of the publish start. */
  since: number;
}

/** The running RTMP service, for tools, tests and vendor plugins (provided only when enabled). */
export interface RtmpService {
  /** Bound ports: the real ones when the config says port 0. `rtmps` only with `enable_tls`. */
  ports(): { rtmp: number; rtmps?: number };
  channels(): RtmpChannelInfo[];
}

export const rtmpServiceRef = createServiceRef<RtmpService>('rtmp.service');
