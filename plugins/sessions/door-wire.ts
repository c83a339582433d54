import type { SessionInfo } from './api.ts';

/*
 * What the sessions plugin and the copies of its file door tap module (door-tap.ts, one next to
 * every copy of the door, main's included) share: the admission state of the `hls` collector in
 * a SharedArrayBuffer, and the messages over the door channel. Types and constants only.
 *
 * The state (Int32, written with Atomics):
 * - LIVE: the sessions main holds (pending ones included: the admission counts them), written by
 *   main whenever the number changes.
 * - BITRATE_FULL: 1 while the egress alone is over `max_bitrate_mbit` (published every second).
 * - LIMITED: 1 during a run of refusals; the copy that turns it 0 -> 1 reports the run's start
 *   (the `session.limit` event), any admission turns it back to 0.
 * - RESERVED + (second % SLOTS): sessions a copy admitted and main has not registered yet, by
 *   the second they were admitted in. A copy adds its reservation and then reads the total, so
 *   of two threads racing for the last place at most one admits. Main gives a reservation back
 *   when the copy's batch reaches it, after raising LIVE; a slot older than EXPIRE_S seconds is
 *   cleared (a thread that died before it reported leaves no lasting hole in the limit).
 */
export const LIVE = 0;
export const BITRATE_FULL = 1;
export const LIMITED = 2;
export const RESERVED = 3;
export const SLOTS = 16;
export const EXPIRE_S = 8;
/**
 * - RECENT_HEAD, then RECENT entries of RECENT_WORDS: the ids copies registered last (a ring), so
 *   a copy that has not heard main's `known` yet still knows a viewer another copy admitted a
 *   moment ago (its playlist must not be refused as a new viewer's). Each entry is a sequence word
 *   (0 while written) and the id's 22 ASCII bytes in 6 words.
 */
export const RECENT_HEAD = RESERVED + SLOTS;
export const RECENT = 256;
export const RECENT_WORDS = 7;
export const STATE_BYTES = (RECENT_HEAD + 1 + RECENT * RECENT_WORDS) * 4;

/** The module's `init`. */
export interface DoorInit {
  state: SharedArrayBuffer;
  /** `sessions.max_sessions` (0 = unlimited). */
  maxSessions: number;
  /** `sessions.ip_ignorelist`. */
  ignore: readonly string[];
}

/** A viewer a copy admitted: its id and what main registers it with (hls.ts builds the same). */
export interface Registration extends Required<SessionInfo> {
  id: string;
}

/**
 * From a copy: what it saw since its last batch (threads: at most every 500 ms; main: at once).
 * `reg`: new viewers; `res`: reservations taken, [second, count]; `tx`: bytes sent, [id, bytes,
 * 1 when a segment (activates the session) else 0]; `lim`: a run of refusals started here, why.
 */
export interface CopyBatch {
  t: 'batch';
  reg?: Registration[];
  res?: [number, number][];
  tx?: [string, number, 0 | 1][];
  lim?: string;
}

/** From a copy when it starts: asks for the ids and full locations main knows. */
export interface CopyHello {
  t: 'hello';
}

export type CopyMessage = CopyBatch | CopyHello;

/**
 * From main to every copy. `known`: session ids main registered (`add`) or closed (`drop`);
 * `full`: the playlists (mount paths) whose upload rate puts a new viewer over the bitrate limit,
 * the whole list each time it changes.
 */
export type MainMessage = { t: 'known'; add: string[]; drop: string[] } | { t: 'full'; locations: string[] };

export const NUMBER_EXCEEDED = 'Number of sessions exceeded';
export const BITRATE_EXCEEDED = 'Bitrate limit exceeded';
