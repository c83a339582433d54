import type { KV } from 'nats';
import { httpHooksRef, type FilesystemService, type PluginHooks } from '../../sdk/index.ts';
import type { Log } from './connection.ts';
import { PeerKey } from './peer.ts';
import { ClusterProxy, type ProxyNode } from './proxy.ts';

export interface ProxyMountOptions {
  hooks: PluginHooks;
  node: ProxyNode;
  /** The node's KV bucket for the key (`core_assign`), once connected. */
  bucket(): KV | undefined;
  filesystems: () => readonly FilesystemService[];
  /** How often to retry reading the key until it is known. */
  periodMs: number;
  log: Log;
}

/**
 * Taps the HTTP hooks for the proxy (`forward`) and the signed client address (`peer`), and
 * reads the cluster key until it has it (NATS may be electing its leaders when the node starts).
 * `start` once the node connects; `close` stops retrying and drops kept-alive connections. `key`
 * signs the relay's pulls (`relay-mount.ts`).
 */
export function mountProxy(o: ProxyMountOptions): { key: PeerKey; start(): void; close(): void } {
  const key = new PeerKey(o.node.id);
  const proxy = new ClusterProxy(o.node, key, o.filesystems);
  o.hooks.tap(httpHooksRef, 'peer', (request) => key.take(request));
  o.hooks.tap(httpHooksRef, 'forward', (input) => proxy.forward(input));
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let started = false;
  let failed = '';
  const attempt = async (): Promise<void> => {
    const kv = o.bucket();
    if (kv) {
      try {
        await key.load(kv);
      } catch (err) {
        const msg = (err as Error).message;
        if (msg !== failed) o.log.warn({ err }, 'cluster: reading the signing key');
        failed = msg;
      }
    }
    if (!key.ready && !closed) timer = setTimeout(() => void attempt(), o.periodMs);
  };
  return {
    key,
    start: () => { if (started || closed) return; started = true; void attempt(); },
    close: () => { closed = true; clearTimeout(timer); proxy.close(); },
  };
}
