import { Type, type Static } from '@sinclair/typebox';
import { describe } from './describe.ts';
import { MAX_TIMER_SECONDS } from './formats.ts';

/* The `http` section (core): how the API listener serves; not in the reference, which serves on every core. */

import { AUTO_MAX_THREADS, MAX_SERVING_THREADS } from './thread-limits.ts';


export const HttpConfig = describe(Type.Object({
  threads: Type.Integer({ default: -1 }),
  /** Bounds of every HTTP listener (API, HTTPS, serving threads): what a stranger can make it hold. */
  max_header_size_kbytes: Type.Integer({ default: 64, minimum: 1, maximum: 1024 }),
  header_timeout_seconds: Type.Integer({ default: 10, minimum: 1, maximum: MAX_TIMER_SECONDS }),
  body_timeout_seconds: Type.Integer({ default: 30, minimum: 1, maximum: MAX_TIMER_SECONDS }),
  max_connections_per_address: Type.Integer({ default: 256, minimum: 0 }),
  send_timeout_seconds: Type.Integer({ default: 60, minimum: 0, maximum: MAX_TIMER_SECONDS }),
}, { default: {} }), {
  threads: `Serving threads beside the main loop: -1 = auto (the default: none below 4 cores, else one per core but one, at most ${AUTO_MAX_THREADS}), `
    + `0 = the main loop serves alone, or a number up to ${MAX_SERVING_THREADS}. `
    + 'Each listens on the API port, and the HTTPS port with TLS on (reusePort), and answers memfs and disk GET/HEAD and memfs uploads itself; everything else goes to the main thread.',
  max_header_size_kbytes: 'Largest request line and headers in KiB (1 to 1024) on every HTTP listener; a request over it gets 431 and its connection is closed.',
  header_timeout_seconds: 'Seconds a client has to send its request line and headers (a new connection too, and its TLS handshake); then 408 and the connection is closed.',
  body_timeout_seconds: 'Seconds a request body may take to arrive whole, from its headers (408 and closed after). '
    + 'Bodies a route streams (file uploads, stream ingest) may take longer but are closed after this long without a byte.',
  max_connections_per_address: 'Open connections one client address may hold on the HTTP and HTTPS ports together (IPv6: per /64; 0 = no limit); '
    + 'more are closed at once. Peers in `api.access.trusted_proxies` and the serving threads\' own hops are not counted.',
  send_timeout_seconds: 'Seconds a client may take no byte of a response while more of it waits to be sent (nginx\'s `send_timeout`); then the connection is closed '
    + '(a paused download holds its buffers, file and place under `max_connections_per_address`). A connection with nothing waiting is not cut (0 = never).',
});
export type HttpConfig = Static<typeof HttpConfig>;
