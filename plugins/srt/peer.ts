import type { IngestPeer, IngestTraffic } from '../../sdk/ingest.ts';
import type { ChannelSink } from './channel.ts';
import type { SrtMode } from './streamid.ts';

/** One accepted SRT connection, as the ingest hooks see it. */
export class SrtPeer implements IngestPeer, ChannelSink {
  readonly id: string;
  readonly protocol = 'srt';
  readonly sock: number;
  readonly stream: string;
  readonly remote: string;
  readonly token?: string;
  readonly params: Readonly<Record<string, string>>;
  readonly mode: SrtMode;
  sent = 0;
  dropped = 0;
  received = 0;
  /** True once the service's stream table took it (as publisher or reader). */
  claimed = false;

  constructor(sock: number, stream: string, mode: SrtMode, remote: string, token: string | undefined, params: Record<string, string>) {
    this.id = `srt-${sock}`;
    this.sock = sock;
    this.stream = stream;
    this.mode = mode;
    this.remote = remote;
    if (token !== undefined) this.token = token;
    this.params = params;
  }

  traffic(): IngestTraffic {
    return { rxBytes: this.received, txBytes: this.sent };
  }
}
