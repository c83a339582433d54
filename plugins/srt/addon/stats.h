// libsrt's statistics of one socket as a JS object (srt_bstats, libsrt's own names); the plugin
// maps them to the API's. With the addon's drop counters.
#pragma once
#include <napi.h>
#include <srt.h>

namespace stats {

inline Napi::Value Of(Napi::Env env, SRTSOCKET s, uint64_t queueDrops, uint64_t reportDrops) {
  SRT_TRACEBSTATS p{};
  if (srt_bstats(s, &p, 0) == SRT_ERROR) return env.Null();
  Napi::Object o = Napi::Object::New(env);
#define F(name) o.Set(#name, Napi::Number::New(env, static_cast<double>(p.name)));
  F(msTimeStamp) F(pktSentTotal) F(pktRecvTotal) F(pktSentUniqueTotal) F(pktRecvUniqueTotal) F(pktSndLossTotal)
  F(pktRcvLossTotal) F(pktRetransTotal) F(pktRcvRetrans) F(pktSentACKTotal) F(pktRecvACKTotal) F(pktSentNAKTotal)
  F(pktRecvNAKTotal) F(usSndDurationTotal) F(pktSndDropTotal) F(pktRcvDropTotal) F(pktRcvUndecryptTotal)
  F(byteSentTotal) F(byteRecvTotal) F(byteSentUniqueTotal) F(byteRecvUniqueTotal) F(byteRcvLossTotal)
  F(byteRetransTotal) F(byteSndDropTotal) F(byteRcvDropTotal) F(byteRcvUndecryptTotal) F(usPktSndPeriod)
  F(pktFlowWindow) F(pktFlightSize) F(msRTT) F(mbpsBandwidth) F(byteAvailSndBuf) F(byteAvailRcvBuf) F(mbpsMaxBW)
  F(byteMSS) F(pktSndBuf) F(byteSndBuf) F(msSndBuf) F(msSndTsbPdDelay) F(pktRcvBuf) F(byteRcvBuf) F(msRcvBuf)
  F(msRcvTsbPdDelay) F(pktReorderTolerance) F(pktRcvAvgBelatedTime) F(mbpsSendRate) F(mbpsRecvRate)
#undef F
  o.Set("queueDrops", Napi::Number::New(env, static_cast<double>(queueDrops)));
  o.Set("reportDrops", Napi::Number::New(env, static_cast<double>(reportDrops)));
  return o;
}

}  // namespace stats
