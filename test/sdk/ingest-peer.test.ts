import t from 'tap';
import { IngestPeerBase } from '../../sdk/ingest-peer.ts';
import type { IngestTraffic } from '../../sdk/ingest.ts';

class Peer extends IngestPeerBase {
  rx = 5;
  traffic(): IngestTraffic {
    return { rxBytes: this.rx, txBytes: 0 };
  }
}

t.test('IngestPeerBase takes the fields of an ingest peer alone, in order; an undefined token stays absent', async (t) => {
  const params = { a: '1' };
  const withToken = new Peer({ id: 'x-1', protocol: 'x', stream: 'live/a', remote: '10.0.0.1:5', token: 'secret', params });
  t.same(Object.keys(withToken), ['id', 'protocol', 'stream', 'remote', 'token', 'params', 'rx']);
  t.equal(withToken.token, 'secret');
  t.equal(withToken.params, params, 'the params object itself');
  const noToken = new Peer({ id: 'x-2', protocol: 'x', stream: 'live/a', remote: '10.0.0.1:6', token: undefined, params });
  t.notOk('token' in noToken, 'no token key');
  // a whole peer (or a description carrying more) gives its fields and nothing else
  const copy = new Peer({ ...withToken, extra: 1, traffic: { rxBytes: 9, txBytes: 9 } } as never);
  t.same(Object.keys(copy), ['id', 'protocol', 'stream', 'remote', 'token', 'params', 'rx']);
  t.same(copy.traffic(), { rxBytes: 5, txBytes: 0 }, 'the subclass\'s traffic, not a copied one');
});
