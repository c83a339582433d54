import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { THREAD_PEER_HEADER } from '../../../sdk/serving-threads.ts';

/*
 * The TCP peer a serving thread saw and the protocol it came in by, carried to the main thread in
 * `THREAD_PEER_HEADER` as `<ip> <http|https> <hmac-sha256(key, "<ip> <proto>") hex>`. The key is
 * random per boot and known only to the main thread and its workers, so a client cannot pose as
 * another address (or as 127.0.0.1, which the localhost exemption and the trusted-proxy rules
 * would believe) nor claim HTTPS (whose `api.access.https` lists may be wider) through a thread.
 * The signature binds no request (it is the same for every request of a client), so main believes
 * it only on connections of its internal loopback listener (`isServingThreadSocket`): a value a
 * client got hold of and sends to the public port is stripped and ignored, and a thread strips
 * whatever a client sent before it signs its own.
 */

/** What a thread vouches for: the client's address and whether it came over TLS. */
export interface ThreadPeer {
  address: string;
  https: boolean;
}

function mac(key: Buffer, subject: string): string {
  return createHmac('sha256', key).update(subject).digest('hex');
}

/** The header value for `peer` reached over HTTP or, with `https`, over TLS (worker side). */
export function signPeer(key: Buffer, peer: string, https = false): string {
  const subject = `${peer} ${https ? 'https' : 'http'}`;
  return `${subject} ${mac(key, subject)}`;
}

/**
 * The peer a thread vouches for, or undefined (no header, or a signature that does not match).
 * The header is removed either way: no route, hook or plugin ever sees it.
 */
export function takeThreadPeer(headers: IncomingHttpHeaders, key: Buffer | undefined): ThreadPeer | undefined {
  const raw = headers[THREAD_PEER_HEADER];
  if (raw === undefined) return undefined;
  delete headers[THREAD_PEER_HEADER];
  if (!key || typeof raw !== 'string') return undefined;
  const sp = raw.lastIndexOf(' ');
  if (sp <= 0) return undefined;
  const subject = raw.slice(0, sp);
  const [address, proto, extra] = subject.split(' ');
  if (!address || (proto !== 'http' && proto !== 'https') || extra !== undefined) return undefined;
  const given = Buffer.from(raw.slice(sp + 1), 'utf8');
  const want = Buffer.from(mac(key, subject), 'utf8');
  return given.length === want.length && timingSafeEqual(given, want) ? { address, https: proto === 'https' } : undefined;
}
