import t from 'tap';
import { toSrtStatistics } from '../../../plugins/srt/stats.ts';

t.test("libsrt's names become the reference's SRTStatistics", async (t) => {
  const s = toSrtStatistics({ msTimeStamp: 1500, byteRecvTotal: 1234, pktRcvLossTotal: 3, msRTT: 0.25, mbpsBandwidth: 940.5 });
  t.equal(s.timestamp_ms, 1500);
  t.equal(s.recv_bytes, 1234);
  t.equal(s.recv_loss_pkt, 3);
  t.equal(s.rtt_ms, 0.25, 'floats stay floats');
  t.equal(s.bandwidth_mbit, 940.5);
  t.equal(s.send_km_pkt, 0, 'no libsrt field: 0');
  t.equal(Object.keys(s).length, 47, 'every field of the reference (timestamp, 27 accumulated, 19 instantaneous)');
});

t.test('NaN and infinities (libsrt averages without samples) become 0, so the listing never fails', async (t) => {
  const s = toSrtStatistics({ pktRcvAvgBelatedTime: NaN, usPktSndPeriod: Infinity, msRTT: NaN });
  t.same([s.pkt_recv_avg_belated_time_ms, s.pkt_send_period_us, s.rtt_ms], [0, 0, 0]);
  t.doesNotThrow(() => JSON.stringify(s));
  t.same(toSrtStatistics(null).sent_bytes, 0, 'a closed socket: zeros');
});
