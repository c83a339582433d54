import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { THREAD_PEER_HEADER } from '../../../sdk/serving-threads.ts';

/*
 * The TCP peer a serving thread saw, carried to the main thread in `THREAD_PEER_HEADER` as
 * `<ip> <hmac-sha256(key, ip) hex>`. The key is random per boot and known only to the main thread
 * and its workers, so a client cannot pose as another address (or as 127.0.0.1, which the
 * localhost exemption and the trusted-proxy rules would believe) through a thread.
 */

function mac(key: Buffer, peer: string): string {
  return createHmac('sha256', key).update(peer).digest('hex');
}

/** The header value for `peer` (worker side). */
export function signPeer(key: Buffer, peer: string): string {
  return `${peer} ${mac(key, peer)}`;
}

/**
 * The peer a thread vouches for, or undefined (no header, or a signature that does not match).
 * The header is removed either way: no route, hook or plugin ever sees it.
 */
export function takeThreadPeer(headers: IncomingHttpHeaders, key: Buffer | undefined): string | undefined {
  const raw = headers[THREAD_PEER_HEADER];
  if (raw === undefined) return undefined;
  delete headers[THREAD_PEER_HEADER];
  if (!key || typeof raw !== 'string') return undefined;
  const sp = raw.indexOf(' ');
  if (sp <= 0) return undefined;
  const peer = raw.slice(0, sp);
  const given = Buffer.from(raw.slice(sp + 1), 'utf8');
  const want = Buffer.from(mac(key, peer), 'utf8');
  return given.length === want.length && timingSafeEqual(given, want) ? peer : undefined;
}
