import { fileURLToPath } from 'node:url';

/*
 * The SRT host program (addon/host.cc over libsrt), started only when SRT is enabled so a
 * configuration without SRT never runs libsrt. It speaks the pipe protocol of host/protocol.ts.
 */

/** libsrt's own statistic names (`srt_bstats`), plus the host's `queueDrops` and `reportDrops`. */
export type SrtRawStats = Record<string, number>;

/** Where the build puts the host; `CORE_SRT_HOST` points elsewhere (tests of a missing host). */
export function hostPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CORE_SRT_HOST || fileURLToPath(new URL('./addon/build/Release/srt-host', import.meta.url));
}
