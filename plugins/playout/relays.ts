import type { PlaylistPlayState, PlayoutStatus } from './api.ts';
import type { RelayOptions } from './relay/index.ts';

/*
 * The relay engine as the shell sees it (plugins/playout/relay/, built by its own module): the
 * shell only starts, stops and steers relays, so it codes against this shape and gets the real
 * class through a factory (index.ts). The options are the engine's own (a type import: the engine
 * still loads only when playout is enabled).
 */

export interface RelayHandle {
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): PlayoutStatus;
  reopen(): void;
  switchStream(url: string): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** Throws an error with code `bad_image` when the image does not decode. */
  setErrorframe(image: Buffer): Promise<void>;
  encodeErrorframe(): Promise<void>;
  keyframe(kind: 'jpg' | 'png'): Promise<Buffer | undefined>;
  /** Where a `playlist:` input is; undefined for a `playout:` input. */
  playlist(): PlaylistPlayState | undefined;
}

export type RelayFactory = (opts: RelayOptions) => RelayHandle;

/** One running relay of one (process, input). */
export interface RelayEntry {
  processId: string;
  inputId: string;
  /** What it was started for: a process whose input changed gets a new relay. */
  address: string;
  inputOptions: readonly string[];
  port: number;
  relay: RelayHandle;
  /**
   * Who switched its source last (`PUT .../stream`) and to what: the ffmpegs that read that source
   * (`-i url`: its probe and its runs) reach of the disk only what both the caller and the process's
   * maker reach (`meetDisks`); the others (the old source, a playlist's next items) the maker's.
   */
  switcher: { caller?: { maker: string; since: number }; url?: string };
}

/** The map key of a (process, input). */
export function relayKey(processId: string, inputId: string): string {
  return `${processId}\u0000${inputId}`;
}

/** The (process, input) of a map key. */
export function splitKey(key: string): [processId: string, inputId: string] {
  const i = key.indexOf('\u0000');
  return [key.slice(0, i), key.slice(i + 1)];
}

/** Whether a start failed because the port is taken by someone else. */
export function addressInUse(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  return e?.code === 'EADDRINUSE' || /EADDRINUSE|address already in use/i.test(e?.message ?? '');
}
