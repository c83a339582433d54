import type { IngestPeer, IngestTraffic } from './ingest.ts';

/** What describes an ingest peer: every field of `IngestPeer` but its traffic. */
type IngestPeerFields = Omit<IngestPeer, 'traffic'>;

/** The fields of `IngestPeer`, declared once (there); the constructor sets them. */
export interface IngestPeerBase extends Readonly<IngestPeerFields> {}

/**
 * A protocol's ingest peer without the field copying: extend it, pass the fields (a `token` that
 * is undefined stays absent) and add `traffic()`. A subclass must not declare these fields again.
 *
 * @example
 * class MyPeer extends IngestPeerBase {
 *   rx = 0;
 *   traffic() { return { rxBytes: this.rx, txBytes: 0 }; }
 * }
 * const peer = new MyPeer({ id: 'my-1', protocol: 'my', stream: 'live/x', remote: '10.0.0.1:4000', params: {} });
 */
export abstract class IngestPeerBase implements IngestPeer {
  /** Takes the fields of `f` alone (it may be a whole peer or carry more). */
  constructor(f: IngestPeerFields) {
    const token = f.token === undefined ? {} : { token: f.token };
    const key = f.key === undefined ? {} : { key: f.key };
    Object.assign(this, { id: f.id, protocol: f.protocol, stream: f.stream, remote: f.remote }, token, key, { params: f.params });
  }

  abstract traffic(): IngestTraffic;
}
