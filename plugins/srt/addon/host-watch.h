// The publishers' media timeouts and liveness (the port of media-watch.ts, whose tests describe
// it): which watched publishers to close, and why.
//
// A publisher quiet for kQuietMs (no media delivered) is asked whether it is still there: one
// MPEG-TS null packet is sent to it, which its libsrt acknowledges if it is. A publisher that
// leaves without a word (killed, or its network gone) sends nothing at all, and libsrt would only
// break it after its peer idle timeout: its readers on every protocol waited as long (issue 44.3;
// the reference breaks a silent SRT peer after 2 s). A publisher that is only quiet (its source
// stalls) answers and stays, up to the idle timeout.
#pragma once
#include <srt.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace host {

constexpr int64_t kQuietMs = 1000;
// How long an answer to the probe may take, beyond twice the connection's round trip.
constexpr int64_t kProbeAnswerMs = 1000;

// Milliseconds as JS writes `ms / 1000` (the service's messages had these texts): "10", "2.5".
inline std::string Seconds(int64_t ms) {
  char b[32];
  snprintf(b, sizeof b, "%.3f", static_cast<double>(ms) / 1000);
  std::string s = b;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// Milliseconds as JS writes `(ms / 1000).toFixed(1)`: both round the double's exact value, but on
// an exact tie (x.x50 with x.x5 a binary fraction) JS rounds up where printf rounds to even.
inline std::string Tenths(int64_t ms) {
  char b[32];
  if (ms >= 0 && (ms % 1000 == 250 || ms % 1000 == 750)) {
    int64_t t = (ms + 50) / 100;
    snprintf(b, sizeof b, "%lld.%lld", static_cast<long long>(t / 10), static_cast<long long>(t % 10));
  } else {
    snprintf(b, sizeof b, "%.1f", static_cast<double>(ms) / 1000);
  }
  return b;
}

class MediaWatch {
 public:
  struct Hooks {
    std::function<size_t(SRTSOCKET, const char*, size_t)> send;     // bytes taken
    std::function<bool(SRTSOCKET, SRT_TRACEBSTATS&)> stats;         // false: no statistics
  };

  MediaWatch(int64_t handshakeMs, int64_t idleMs, Hooks hooks) : handshakeMs_(handshakeMs), idleMs_(idleMs), hooks_(std::move(hooks)) {}

  void Add(SRTSOCKET s, int64_t now) { seen_[s] = Seen{-1, now}; }
  void Delete(SRTSOCKET s) { seen_.erase(s); }
  bool Empty() const { return seen_.empty(); }
  void Clear() { seen_.clear(); }

  // The publishers to close now, each with the reason; `received(sock)` is its byte count, or -1
  // when the connection is gone (it is forgotten).
  std::vector<std::pair<SRTSOCKET, std::string>> Check(int64_t now, const std::function<int64_t(SRTSOCKET)>& received) {
    std::vector<std::pair<SRTSOCKET, std::string>> out;
    for (auto it = seen_.begin(); it != seen_.end();) {
      int64_t bytes = received(it->first);
      if (bytes < 0) { it = seen_.erase(it); continue; }
      Seen& seen = it->second;
      if (bytes > 0 && bytes != seen.bytes) {
        seen = Seen{bytes, now};
      } else {
        std::string why = Verdict(it->first, seen, now);
        if (!why.empty()) out.emplace_back(it->first, why);
      }
      ++it;
    }
    return out;
  }

 private:
  struct Seen {
    int64_t bytes = -1;  // received at the last look (-1: none yet)
    int64_t since = 0;   // when that count last moved
    bool probing = false;  // a probe in flight: when it was sent, the peer's ACK count then
    int64_t probeAt = 0, probeAcks = 0;
    double waitMs = 0;
    int64_t answered = 0;  // when the last probe was answered (the next waits another quiet period)
  };

  std::string Verdict(SRTSOCKET s, Seen& seen, int64_t now) {
    bool started = seen.bytes >= 0;
    int64_t limit = started ? idleMs_ : handshakeMs_;
    if (now - seen.since >= limit) {
      return started ? "no media for " + Seconds(limit) + " s" : "no media within " + Seconds(limit) + " s of the handshake";
    }
    if (!started) return "";
    if (seen.probing) {
      if (Acks(s) > seen.probeAcks) {
        seen.probing = false;
        seen.answered = now;
        return "";
      }
      if (static_cast<double>(now - seen.probeAt) < seen.waitMs) return "";
      return "no media for " + Tenths(now - seen.since) + " s and no answer: the publisher is gone";
    }
    if (now - std::max(seen.since, seen.answered) >= kQuietMs) Probe(s, seen, now);
    return "";
  }

  void Probe(SRTSOCKET s, Seen& seen, int64_t now) {
    SRT_TRACEBSTATS st{};
    bool have = hooks_.stats(s, st);
    int64_t acks = have ? st.pktRecvACKTotal : 0;
    double rtt = have && std::isfinite(st.msRTT) ? st.msRTT : 0;
    if (hooks_.send(s, NullPacket().data(), NullPacket().size()) == 0) return;
    seen.probing = true;
    seen.probeAt = now;
    seen.probeAcks = acks;
    seen.waitMs = kProbeAnswerMs + 2 * rtt;
  }

  int64_t Acks(SRTSOCKET s) {
    SRT_TRACEBSTATS st{};
    return hooks_.stats(s, st) ? st.pktRecvACKTotal : 0;
  }

  // One MPEG-TS null packet (PID 0x1fff): every demuxer skips it.
  static const std::string& NullPacket() {
    static const std::string p = std::string("\x47\x1f\xff\x10", 4) + std::string(184, '\xff');
    return p;
  }

  int64_t handshakeMs_, idleMs_;
  Hooks hooks_;
  std::map<SRTSOCKET, Seen> seen_;
};

}  // namespace host
