import { lookup } from 'node:dns/promises';
import type { Logger } from 'pino';
import type { ingestHooksRef } from '../../sdk/index.ts';
import { loadAddon, versionString, type SrtNativeSocket } from './native.ts';
import { SrtRelay } from './relay.ts';
import { EventsLog } from './events-log.ts';
import { bindAddress } from './schema.ts';
import { srtErrors } from './errors.ts';
import type { SrtConfig } from './schema.ts';

/** Room for addon events on their way to JS; beyond it media is dropped (and counted). */
const EVENT_QUEUE = 4096;
/** libsrt's receive latency for accepted sockets (ms); callers may ask for more. */
const LATENCY_MS = 120;

export interface SrtListening {
  relay: SrtRelay;
  native: SrtNativeSocket;
  host: string;
  port: number;
}

/**
 * Loads the addon and binds the listener: any failure is a BootError saying why (and, for a
 * missing addon or library, how to install it).
 */
export async function startSrt(cfg: SrtConfig, opts: { addonPath: string; log: Logger; hooks: Readonly<ReturnType<(typeof ingestHooksRef)['create']>> }): Promise<SrtListening> {
  let addon;
  try {
    addon = loadAddon(opts.addonPath);
  } catch (err) {
    throw srtErrors.addon(opts.addonPath, (err as Error).message.split('\n')[0]!);
  }
  const want = bindAddress(cfg.address);
  let host = want.host;
  try {
    host = (await lookup(want.host)).address;
  } catch (err) {
    throw srtErrors.bind(cfg.address, (err as Error).message);
  }
  const events = new EventsLog({ enable: cfg.log.enable, topics: cfg.log.topics });
  const relay = new SrtRelay({
    log: opts.log, hooks: opts.hooks, token: cfg.token, events,
    handshakeMs: cfg.handshake_timeout_seconds * 1000, idleMs: cfg.idle_timeout_seconds * 1000,
  });
  const native = new addon.SrtServer({
    host, port: want.port, latencyMs: LATENCY_MS, passphrase: cfg.passphrase, token: cfg.token, queue: EVENT_QUEUE,
    maxConnections: cfg.max_connections, maxPerAddress: cfg.max_connections_per_address,
    failBaseMs: cfg.fail_delay_ms, failMaxMs: cfg.fail_delay_max_ms, peerIdleMs: cfg.idle_timeout_seconds * 1000,
  }, relay.onEvent);
  relay.attach(native);
  let port: number;
  try {
    port = native.start();
  } catch (err) {
    relay.close();
    throw srtErrors.bind(cfg.address, (err as Error).message);
  }
  opts.log.info({ address: `${host}:${port}`, libsrt: versionString(addon.version), encrypted: cfg.passphrase !== '' }, 'SRT server listening');
  return { relay, native, host: want.host, port };
}
