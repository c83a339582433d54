import type { SrtRawStats } from './native.ts';

/*
 * libsrt's statistics (srt_bstats names) as the API's SRTStatistics (reference 5.13). Pure.
 */

/** API name → libsrt name; all counters accumulated since the connection started. */
const FIELDS: Readonly<Record<string, string>> = {
  timestamp_ms: 'msTimeStamp',
  sent_pkt: 'pktSentTotal', recv_pkt: 'pktRecvTotal',
  sent_unique_pkt: 'pktSentUniqueTotal', recv_unique_pkt: 'pktRecvUniqueTotal',
  send_loss_pkt: 'pktSndLossTotal', recv_loss_pkt: 'pktRcvLossTotal',
  sent_retrans_pkt: 'pktRetransTotal', recv_retran_pkts: 'pktRcvRetrans',
  sent_ack_pkt: 'pktSentACKTotal', recv_ack_pkt: 'pktRecvACKTotal',
  sent_nak_pkt: 'pktSentNAKTotal', recv_nak_pkt: 'pktRecvNAKTotal',
  send_km_pkt: '', recv_km_pkt: '',
  send_duration_us: 'usSndDurationTotal',
  send_drop_pkt: 'pktSndDropTotal', recv_drop_pkt: 'pktRcvDropTotal',
  recv_undecrypt_pkt: 'pktRcvUndecryptTotal',
  sent_bytes: 'byteSentTotal', recv_bytes: 'byteRecvTotal',
  sent_unique_bytes: 'byteSentUniqueTotal', recv_unique_bytes: 'byteRecvUniqueTotal',
  recv_loss_bytes: 'byteRcvLossTotal', sent_retrans_bytes: 'byteRetransTotal',
  send_drop_bytes: 'byteSndDropTotal', recv_drop_bytes: 'byteRcvDropTotal',
  recv_undecrypt_bytes: 'byteRcvUndecryptTotal',
  pkt_send_period_us: 'usPktSndPeriod', flow_window_pkt: 'pktFlowWindow', flight_size_pkt: 'pktFlightSize',
  rtt_ms: 'msRTT', bandwidth_mbit: 'mbpsBandwidth',
  avail_send_buf_bytes: 'byteAvailSndBuf', avail_recv_buf_bytes: 'byteAvailRcvBuf',
  max_bandwidth_mbit: 'mbpsMaxBW', mss_bytes: 'byteMSS',
  send_buf_pkt: 'pktSndBuf', send_buf_bytes: 'byteSndBuf', send_buf_ms: 'msSndBuf',
  send_tsbpd_delay_ms: 'msSndTsbPdDelay',
  recv_buf_pkt: 'pktRcvBuf', recv_buf_bytes: 'byteRcvBuf', recv_buf_ms: 'msRcvBuf',
  recv_tsbpd_delay_ms: 'msRcvTsbPdDelay',
  reorder_tolerance_pkt: 'pktReorderTolerance', pkt_recv_avg_belated_time_ms: 'pktRcvAvgBelatedTime',
};

/** Floats in the reference; every other field is an unsigned integer. */
const FLOATS = new Set(['pkt_send_period_us', 'rtt_ms', 'bandwidth_mbit', 'max_bandwidth_mbit']);

export type SrtStatistics = Record<string, number>;

/**
 * Maps one socket's raw statistics. The key-material packet counts have no srt_bstats field in
 * libsrt 1.5 and are 0.
 */
export function toSrtStatistics(raw: SrtRawStats | null): SrtStatistics {
  const out: SrtStatistics = {};
  for (const [api, lib] of Object.entries(FIELDS)) {
    // libsrt reports NaN for some averages before it has samples (e.g. belated time); JSON has no NaN
    const given = lib && raw ? raw[lib] ?? 0 : 0;
    const v = Number.isFinite(given) ? given : 0;
    out[api] = FLOATS.has(api) ? v : Math.max(0, Math.trunc(v));
  }
  return out;
}
