import type { IngestPeer, IngestTraffic } from '@media-core/sdk';
import { shortId } from '@media-core/sdk/toolkit';

/** An IngestPeer for one HTTP connection, with byte counters the routes add to. */
export interface CountedPeer extends IngestPeer {
  readonly counts: IngestTraffic;
}

/** `ip:port` as the ingest hooks expect it (IPv6 in brackets). */
function remoteOf(ip: string, port: number | undefined): string {
  return `${ip.includes(':') ? `[${ip}]` : ip}:${port ?? 0}`;
}

/**
 * Describes a publisher or reader: the protocol is `httpts` (the sessions plugin gives it a
 * collector of that name), the stream is the name in the URL, the token comes from `?token=`
 * and is left out of `params`, so taps that log params never log it.
 */
export function httpPeer(stream: string, ip: string, port: number | undefined, query: Record<string, unknown>): CountedPeer {
  const counts: IngestTraffic = { rxBytes: 0, txBytes: 0 };
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) if (k !== 'token' && k !== 'key' && typeof v === 'string') params[k] = v;
  const token = typeof query.token === 'string' ? query.token : undefined;
  return {
    id: `httpts-${shortId()}`,
    protocol: 'httpts',
    stream,
    remote: remoteOf(ip, port),
    token,
    params,
    counts,
    traffic: () => ({ ...counts }),
  };
}
