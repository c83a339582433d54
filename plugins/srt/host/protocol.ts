import type { IngestRefusal, IngestTraffic } from '../../../sdk/index.ts';
import type { SrtChannels } from '../relay.ts';

/*
 * The messages between the service and its SRT host process (host/entry.ts), over node's IPC
 * channel. Media never crosses it: the host routes and fans out itself; the service gets the
 * hook calls, the traffic counts, the log lines and the listing.
 */

/** What the host needs to listen: the `srt` settings it uses (sent over IPC, never on argv). */
export interface HostOptions {
  addonPath: string;
  host: string;
  port: number;
  passphrase: string;
  token: string;
  logEnable: boolean;
  logTopics: string[];
  handshakeMs: number;
  idleMs: number;
  maxConnections: number;
  maxPerAddress: number;
  failBaseMs: number;
  failMaxMs: number;
}

/** An ingest peer as data (the host's SrtPeer without its methods). */
export interface PeerData {
  id: string;
  stream: string;
  remote: string;
  token?: string;
  params: Record<string, string>;
  traffic: IngestTraffic;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type AskHook = 'prePublish' | 'prePlay';
export type TellHook = 'onPublish' | 'onPlay' | 'onPublishEnd' | 'onPlayEnd';

export type ToHost =
  | { t: 'start'; opts: HostOptions }
  | { t: 'answer'; seq: number; refusal?: IngestRefusal }
  | { t: 'list'; seq: number };

export type FromHost =
  | { t: 'listening'; port: number; libsrt: string }
  | { t: 'failed'; stage: 'addon' | 'bind'; message: string }
  | { t: 'log'; level: LogLevel; fields: Record<string, unknown>; msg: string }
  | { t: 'ask'; seq: number; hook: AskHook; peer: PeerData }
  | { t: 'tell'; hook: TellHook; peer: PeerData }
  | { t: 'traffic'; rows: Array<[id: string, rx: number, tx: number]> }
  | { t: 'listed'; seq: number; value: SrtChannels };
