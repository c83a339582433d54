import { lookup } from 'node:dns/promises';
import type { Logger } from 'pino';
import type { ChildrenService, StreamTable } from '../../sdk/index.ts';
import { bindAddress } from './schema.ts';
import { srtErrors } from './errors.ts';
import type { SrtConfig } from './schema.ts';
import { SrtHost } from './host/host.ts';

export interface SrtListening {
  host: SrtHost;
  /** The bound address's host, as `srt.address` names it. */
  bindHost: string;
  port: number;
}

/**
 * The settings the host process takes only at its start (the host's listener and handshake
 * checks: address, passphrase, token, bounds, log): a reload that changes one starts a new host
 * (its connections end); one that changes none keeps it (`ctx.keep`). Everything but `enable`.
 */
export function hostSettings(cfg: SrtConfig, userKeys = false): Record<string, unknown> {
  const { enable: _enable, ...rest } = cfg;
  return { ...rest, userKeys };
}

/**
 * Starts the SRT host program (libsrt, apart from the service) and binds the listener there:
 * any failure is a BootError saying why (and, for a missing host or library, how to install it).
 */
export async function startSrt(cfg: SrtConfig, opts: {
  hostPath: string; log: Logger; children: ChildrenService; streams: StreamTable;
  /** An access plugin (iam) decides users' keys `<user>:<token>`: the handshake lets them through to the table's admission. */
  userKeys: boolean;
}): Promise<SrtListening> {
  const want = bindAddress(cfg.address);
  let ip = want.host;
  try {
    ip = (await lookup(want.host)).address;
  } catch (err) {
    throw srtErrors.bind(cfg.address, (err as Error).message);
  }
  const host = new SrtHost({
    children: opts.children, log: opts.log, streams: opts.streams, path: opts.hostPath,
    opts: {
      host: ip, port: want.port, passphrase: cfg.passphrase, token: cfg.token,
      logEnable: cfg.log.enable, logTopics: [...cfg.log.topics],
      handshakeMs: cfg.handshake_timeout_seconds * 1000, idleMs: cfg.idle_timeout_seconds * 1000,
      maxConnections: cfg.max_connections, maxPerAddress: cfg.max_connections_per_address,
      failBaseMs: cfg.fail_delay_ms, failMaxMs: cfg.fail_delay_max_ms, userKeys: opts.userKeys,
    },
  });
  let started: { port: number; libsrt: string };
  try {
    started = await host.start();
  } catch (err) {
    await host.close();
    const e = err as Error & { stage?: string };
    throw e.stage === 'bind' ? srtErrors.bind(cfg.address, e.message) : srtErrors.host(opts.hostPath, e.message);
  }
  opts.log.info({ address: `${ip}:${started.port}`, libsrt: started.libsrt, encrypted: cfg.passphrase !== '' }, 'SRT server listening');
  return { host, bindHost: want.host, port: started.port };
}
