import type { IncomingHttpHeaders } from 'node:http';
import { ClientVerifier, signClient } from '../../../sdk/client-signature.ts';
import { THREAD_PEER_HEADER } from './module.ts';

/*
 * The TCP peer a serving thread saw and the protocol it came in by, carried to the main thread in
 * `THREAD_PEER_HEADER` in the service's one signed client-address scheme (sdk/client-signature.ts,
 * the cluster's too): `<ip> <http|https> <unix ms> <nonce> <body sha256 | -> <hmac>`, signed for
 * the receiver `main`, the request's method and URL, with a key random per boot that only main
 * and its threads hold. A client cannot pose as another address (or as 127.0.0.1, which the
 * localhost exemption and the trusted-proxy rules would believe) nor claim HTTPS (whose
 * `api.access.https` lists may be wider) through a thread.
 *
 * Main believes it only on connections of its internal loopback listener (`isServingThreadSocket`):
 * a value a client got hold of and sends to the public port is stripped and ignored, and a thread
 * strips whatever a client sent before it signs its own. That binding is what stops replays here,
 * so main keeps no memory of nonces for this hop: at 50 000 forwarded requests a second a window
 * of 30 s would hold 1.5 million of them, and the only ones who could replay a header on the
 * internal port are local processes that can read loopback traffic (who could as well connect to
 * the public port from 127.0.0.1). The time and the request line are still checked, so a header
 * seen once vouches for nothing else and not for long. Bodies the threads stream are not signed
 * (`-`): main accepts that on the internal listener only, the connection being the thread's.
 */

/** The receiver id the threads sign for. */
export const THREAD_RECEIVER = 'main';

/** What a thread vouches for: the client's address and whether it came over TLS. */
export interface ThreadPeer {
  address: string;
  https: boolean;
}

/** Stateless (no nonce memory, see above): one for the process. */
const verifier = new ClientVerifier({ receiver: THREAD_RECEIVER, replayMemory: false, unsignedBodies: true });

/** The header value for `peer`, reached over HTTP or, with `https`, over TLS, for one request (worker side). */
export function signPeer(key: Buffer, peer: string, https: boolean, method: string, url: string, now = Date.now()): string {
  return signClient(key, { address: peer, https, receiver: THREAD_RECEIVER, method, url }, now);
}

/**
 * The peer a thread vouches for this request, or undefined (no key, no header, a signature that
 * does not match). The header is removed either way: no route, hook or plugin ever sees it.
 */
export function takeThreadPeer(headers: IncomingHttpHeaders, key: Buffer | undefined, method: string, url: string, now = Date.now()): ThreadPeer | undefined {
  const vouched = verifier.take(key, headers, THREAD_PEER_HEADER, method, url, now);
  return vouched && { address: vouched.address, https: vouched.https };
}
