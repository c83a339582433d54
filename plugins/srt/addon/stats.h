// libsrt's statistics of one socket (srt_bstats), by libsrt's own names: the plugin maps them to
// the API's. One list for both users, so the addon's JS object and the host's JSON carry the same
// fields: F(name) is expanded once per field of SRT_TRACEBSTATS that the plugin reads.
#pragma once

#define SRT_STATS_FIELDS(F)                                                                                          \
  F(msTimeStamp) F(pktSentTotal) F(pktRecvTotal) F(pktSentUniqueTotal) F(pktRecvUniqueTotal) F(pktSndLossTotal)     \
  F(pktRcvLossTotal) F(pktRetransTotal) F(pktRcvRetrans) F(pktSentACKTotal) F(pktRecvACKTotal) F(pktSentNAKTotal)   \
  F(pktRecvNAKTotal) F(usSndDurationTotal) F(pktSndDropTotal) F(pktRcvDropTotal) F(pktRcvUndecryptTotal)            \
  F(byteSentTotal) F(byteRecvTotal) F(byteSentUniqueTotal) F(byteRecvUniqueTotal) F(byteRcvLossTotal)               \
  F(byteRetransTotal) F(byteSndDropTotal) F(byteRcvDropTotal) F(byteRcvUndecryptTotal) F(usPktSndPeriod)            \
  F(pktFlowWindow) F(pktFlightSize) F(msRTT) F(mbpsBandwidth) F(byteAvailSndBuf) F(byteAvailRcvBuf) F(mbpsMaxBW)    \
  F(byteMSS) F(pktSndBuf) F(byteSndBuf) F(msSndBuf) F(msSndTsbPdDelay) F(pktRcvBuf) F(byteRcvBuf) F(msRcvBuf)       \
  F(msRcvTsbPdDelay) F(pktReorderTolerance) F(pktRcvAvgBelatedTime) F(mbpsSendRate) F(mbpsRecvRate)
