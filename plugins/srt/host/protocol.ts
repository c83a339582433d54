import type { IngestRefusal, IngestTraffic } from '../../../sdk/index.ts';
import type { SrtChannels } from '../relay.ts';
import type { SrtRun } from '../run-scope.ts';

/*
 * The messages between the service and its SRT host process (host/entry.ts), over node's IPC
 * channel: claims on the service's stream table (which runs the ingest hooks), traffic counts, log lines, the
 * listing. Media never crosses it: it goes over a pipe of its own (media-pipe.ts), publishers'
 * chunks to the service's stream table, the table's chunks to the host's subscribers.
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
  /** The iam plugin runs: a user's key `<user>:<token>` is admitted by the handshake and decided by the service. */
  userKeys: boolean;
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

/** Publish or read in the service's stream table (which admits: the `pre*` hooks, then the table's rules). */
export type ClaimMode = 'publish' | 'request';

export type ToHost =
  | { t: 'start'; opts: HostOptions }
  | { t: 'claimed'; seq: number; refusal?: IngestRefusal }
  /** The table stopped serving a subscriber (its publisher ended, or it was dropped). */
  | { t: 'kick'; sock: number; why: string }
  /**
   * The live stream names of the table (the addon refuses second publishers of them) and the names
   * on-demand processes publish (requests for them are admitted too); requests for others are refused early.
   */
  | { t: 'names'; names: string[]; readable: string[] }
  /** The children's live run credentials (replacing the last list); answered with `runsSet`. */
  | { t: 'runs'; seq: number; runs: SrtRun[] }
  /** The IAM users' own passphrases, by name (replacing the last map). */
  | { t: 'users'; users: Record<string, string> }
  | { t: 'list'; seq: number };

export type FromHost =
  | { t: 'listening'; port: number; libsrt: string }
  | { t: 'failed'; stage: 'addon' | 'bind'; message: string }
  | { t: 'log'; level: LogLevel; fields: Record<string, unknown>; msg: string }
  | { t: 'claim'; seq: number; mode: ClaimMode; sock: number; peer: PeerData }
  /**
   * A connection whose claim was asked ended: its publisher handle ends, or its reader leaves (the
   * end hook gets `traffic`, its last count); a claim under way takes nothing.
   */
  | { t: 'release'; id: string; traffic: IngestTraffic }
  | { t: 'traffic'; rows: Array<[id: string, rx: number, tx: number]> }
  | { t: 'listed'; seq: number; value: SrtChannels }
  /** The host holds the runs of `runs` `seq`: a child told of them may connect. */
  | { t: 'runsSet'; seq: number };
