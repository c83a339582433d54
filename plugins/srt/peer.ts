import type { IngestTraffic } from '../../sdk/ingest.ts';
import { IngestPeerBase } from '../../sdk/ingest-peer.ts';
import type { SrtMode } from './streamid.ts';

/** One accepted SRT connection, as the ingest hooks see it. */
export class SrtPeer extends IngestPeerBase {
  readonly sock: number;
  readonly mode: SrtMode;
  /** Bytes the host queued to it, and dropped because its send buffer was full (the host's counts). */
  sent = 0;
  dropped = 0;
  received = 0;
  /** True once the service's stream table took it (as publisher or reader). */
  claimed = false;

  /** `key`: a user's key `<user>:<token>` for the stream table's admission to decide (the iam plugin). */
  constructor(sock: number, stream: string, mode: SrtMode, remote: string, token: string | undefined, params: Record<string, string>, key?: string) {
    super({ id: `srt-${sock}`, protocol: 'srt', stream, remote, token, params, ...(key === undefined ? {} : { key }) });
    this.sock = sock;
    this.mode = mode;
  }

  traffic(): IngestTraffic {
    return { rxBytes: this.received, txBytes: this.sent };
  }
}
