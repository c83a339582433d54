import type { IngestTraffic } from '../../sdk/ingest.ts';
import { IngestPeerBase } from '../../sdk/ingest-peer.ts';
import type { ChannelSink } from './channel.ts';
import type { SrtMode } from './streamid.ts';

/** One accepted SRT connection, as the ingest hooks see it. */
export class SrtPeer extends IngestPeerBase implements ChannelSink {
  readonly sock: number;
  readonly mode: SrtMode;
  sent = 0;
  dropped = 0;
  received = 0;
  /** True once the service's stream table took it (as publisher or reader). */
  claimed = false;

  constructor(sock: number, stream: string, mode: SrtMode, remote: string, token: string | undefined, params: Record<string, string>) {
    super({ id: `srt-${sock}`, protocol: 'srt', stream, remote, token, params });
    this.sock = sock;
    this.mode = mode;
  }

  traffic(): IngestTraffic {
    return { rxBytes: this.received, txBytes: this.sent };
  }
}
