// srt-host: the SRT side of the `srt` plugin, a program of its own so that a fault inside libsrt
// (a crash on a malformed packet, found by the fuzz suite in libsrt 1.5.1) ends this process and
// its SRT connections, never the service; native so that it costs a few MB, not a Node runtime.
// The service (plugins/srt/host/host.ts) starts it with its pipe as fd 3 and speaks
// plugins/srt/host/protocol.ts over it: settings first (START), then the names, run credentials
// and users the handshake needs, media for subscribers (DELIVER) and orders (CLOSE, WATCH); this
// side answers with what happens to the connections and the publishers' media.
//
// Threads: libsrt's own; the listener's worker (listener.h: libsrt's epoll, accepts, media in);
// and this main thread, which reads the pipe, sends to subscribers, watches publishers' media
// and keeps the timers. It sleeps in poll() with no timeout while nothing needs time.
// Exit codes: 0 when the service closed the pipe or sent SIGTERM, 1 when it cannot listen (after
// FAILED) or the pipe carried a frame that is not the service's, 2 when run without the pipe.
#include "host-pipe.h"
#include "host-report.h"
#include "host-watch.h"
#include "listener.h"
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <cmath>
#include <cstdlib>
#include <memory>

namespace host {

constexpr int kPipe = 3;
// The media watch's look at the publishers while some are watched.
constexpr int64_t kWatchMs = 250;
// The service's sessions poll the connections' traffic once a second.
constexpr int64_t kTrafficMs = 1000;
// Quiet time after connections left before their memory goes back (issue 46.2).
constexpr int64_t kGiveBackMs = 5000;
// Chunks in a row a subscriber may refuse before it is closed (about a second of media).
constexpr int kMaxStalls = 250;

// A decimal field as an integer within [lo, hi]; false when it is not one.
bool Int(const std::string& s, int64_t lo, int64_t hi, int64_t& out) {
  char* end = nullptr;
  double d = strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(d) || d < lo || d > hi) return false;
  out = std::llround(d);
  return true;
}

template <class T>
bool Int(const std::string& s, int64_t lo, int64_t hi, T& out) {
  int64_t v = 0;
  if (!Int(s, lo, hi, v)) return false;
  out = static_cast<T>(v);
  return true;
}

// START's fields (protocol.ts START_FIELDS): host, port, latencyMs, passphrase, token,
// maxConnections, maxPerAddress, failBaseMs, failMaxMs, peerIdleMs, userKeys, handshakeMs, idleMs.
bool ParseStart(const frames::Fields& f, Settings& s) {
  constexpr int64_t kBig = 1LL << 31;
  if (f.size() < 13) return false;
  s.host = f[0];
  s.passphrase = f[3];
  s.token = f[4];
  s.userKeys = f[10] == "1" || f[10] == "true";
  admission::Limits& l = s.limits;
  return Int(f[1], 0, 65535, s.port) && Int(f[2], 0, kBig - 1, s.latencyMs) && Int(f[5], 0, kBig - 1, l.maxTotal) &&
         Int(f[6], 0, kBig - 1, l.maxPerAddress) && Int(f[7], 0, kBig, l.failBaseMs) && Int(f[8], 0, kBig, l.failMaxMs) &&
         Int(f[9], 0, kBig - 1, s.peerIdleMs) && Int(f[11], 0, kBig, s.handshakeMs) && Int(f[12], 0, kBig, s.idleMs);
}

std::string Version() {
  int v = srt_getversion();
  return std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." + std::to_string(v & 0xff);
}

class Host {
 public:
  Host(int wake, int sig) : wake_(wake), sig_(sig), out_(kPipe, wake) {}

  // The main loop; returns the exit code.
  int Run() {
    for (;;) {
      int64_t now = admission::Gate::NowMs();
      Tick(now);
      pollfd p[3] = {{kPipe, static_cast<short>(POLLIN | (out_.Pending() ? POLLOUT : 0)), 0}, {wake_, POLLIN, 0}, {sig_, POLLIN, 0}};
      if (poll(p, 3, Timeout(now)) < 0 && errno != EINTR) {
        fprintf(stderr, "srt-host: poll failed: %s\n", strerror(errno));
        return Quit(1);
      }
      if (p[2].revents != 0) return Quit(0);  // SIGTERM
      if (p[1].revents != 0) { uint64_t n; ssize_t r = read(wake_, &n, sizeof n); (void)r; }
      if (p[0].revents & POLLOUT) out_.Flush();
      if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        auto r = in_.Read(kPipe, [this](uint8_t kind, const frames::Ids& ids, const char* data, size_t len) { OnFrame(kind, ids, data, len); });
        if (r == frames::Reader::kTooLong) {
          fprintf(stderr, "srt-host: the pipe announced a frame over %u bytes: not the service's\n", frames::kMaxFrame);
          return Quit(1);
        }
        if (r == frames::Reader::kEof) return Quit(0);
      }
      if (out_.Gone()) return Quit(0);
    }
  }

 private:
  void OnFrame(uint8_t kind, const frames::Ids& ids, const char* data, size_t len) {
    if (!listener_) {
      if (kind == frames::kStart) Start(data, len);
      return;  // nothing else means anything before the settings
    }
    if (kind == frames::kDeliver) return Deliver(ids, data, len);
    if (kind == frames::kClose) {
      for (uint32_t id : ids) Close(static_cast<SRTSOCKET>(id), "");
      return;
    }
    if (kind == frames::kWatch) {
      if (!ids.empty() && listener_->Find(ids[0])) watch_->Add(ids[0], admission::Gate::NowMs());
      return;
    }
    if (kind == frames::kStats) return Stats(ids);
    frames::Fields f;
    if (kind < frames::kNames || kind > frames::kUsers || !frames::Decode(data, len, f)) return;  // unknown, or not fields
    if (kind == frames::kNames) Names(f);
    if (kind == frames::kRuns) Runs(ids, f);
    if (kind == frames::kUsers) Users(f);
  }

  void Start(const char* data, size_t len) {
    frames::Fields f;
    Settings s;
    if (!frames::Decode(data, len, f) || !ParseStart(f, s)) Fail("the START frame is malformed");
    auto changed = [this](bool ended) {
      if (ended) ended_ = true;
      uint64_t one = 1;
      ssize_t r = write(wake_, &one, sizeof one);
      (void)r;
    };
    listener_ = std::make_unique<Listener>(s, out_, changed);
    std::string why;
    int port = listener_->Start(why);
    if (port < 0) Fail(why);
    MediaWatch::Hooks hooks{srtio::Send, [](SRTSOCKET sock, SRT_TRACEBSTATS& st) { return srt_bstats(sock, &st, 0) != SRT_ERROR; }};
    watch_ = std::make_unique<MediaWatch>(s.handshakeMs, s.idleMs, hooks);
    out_.Send(frames::kListening, {}, {std::to_string(port), Version()});
  }

  // Cannot listen: the service is told why (the frame written out before going), then exit 1.
  [[noreturn]] void Fail(const std::string& why) {
    out_.Send(frames::kFailed, {}, {"bind", why});
    for (int i = 0; i < 10 && out_.Pending() && !out_.Gone(); i++) {
      pollfd p{kPipe, POLLOUT, 0};
      if (poll(&p, 1, 100) > 0) out_.Flush();
    }
    fprintf(stderr, "srt-host: cannot listen: %s\n", why.c_str());
    exit(1);
  }

  // A chunk of the stream table for the subscribers of `ids` (the port of channel.ts): queued on
  // each socket without blocking; what a full send buffer refused is counted as dropped, and a
  // subscriber refusing every chunk for kMaxStalls in a row is closed (it is too slow).
  void Deliver(const frames::Ids& ids, const char* data, size_t len) {
    for (uint32_t id : ids) {
      SRTSOCKET s = static_cast<SRTSOCKET>(id);
      ConnPtr c = listener_->Find(s);
      if (!c) continue;
      size_t n = srtio::Send(s, data, len);
      c->sent += n;
      c->dropped += len - n;
      c->stalls = n == 0 ? c->stalls + 1 : 0;
      if (c->stalls == kMaxStalls) Close(s, "too slow: its send buffer stayed full");
    }
  }

  // Closes a connection: for the service (no `why`, no CLOSED) or by the host itself.
  void Close(SRTSOCKET s, const std::string& why) {
    if (!listener_->Close(s, why)) return;
    watch_->Delete(s);
    GiveBackSoon(admission::Gate::NowMs());
  }

  // NAMES: `n`, n names with a live publisher, then the names readable without one.
  void Names(const frames::Fields& f) {
    size_t n = 0;
    if (f.empty() || !Int(f[0], 0, static_cast<int64_t>(f.size()) - 1, n)) return;
    std::set<std::string> live(f.begin() + 1, f.begin() + 1 + n), readable(f.begin() + 1 + n, f.end());
    listener_->SetNames(std::move(live), std::move(readable));
  }

  // RUNS (ids: seq): token, passphrase, grants joined by "\n", per run; answered RUNS_SET once the
  // handshake admits them (the service then tells the children).
  void Runs(const frames::Ids& ids, const frames::Fields& f) {
    if (f.size() % 3 != 0) return;
    std::unordered_map<std::string, runs::Run> next;
    for (size_t i = 0; i < f.size(); i += 3) {
      runs::Run r;
      r.passphrase = f[i + 1];
      for (size_t at = 0; at < f[i + 2].size();) {
        size_t end = std::min(f[i + 2].find('\n', at), f[i + 2].size());
        if (end > at) r.grants.insert(f[i + 2].substr(at, end - at));
        at = end + 1;
      }
      next[f[i]] = std::move(r);
    }
    listener_->Runs().Set(std::move(next));
    out_.Send(frames::kRunsSet, frames::Ids(ids.begin(), ids.begin() + std::min<size_t>(ids.size(), 1)), frames::Fields{});
  }

  // USERS: name, passphrase, name, passphrase...
  void Users(const frames::Fields& f) {
    if (f.size() % 2 != 0) return;
    std::unordered_map<std::string, std::string> next;
    for (size_t i = 0; i < f.size(); i += 2) next[f[i]] = f[i + 1];
    listener_->Runs().SetUsers(std::move(next));
  }

  // STATS (ids: seq, then the sockets): answered STATS_OF (ids: seq) with their JSON.
  void Stats(const frames::Ids& ids) {
    if (ids.empty()) return;
    std::vector<SRTSOCKET> socks(ids.begin() + 1, ids.end());
    out_.Send(frames::kStatsOf, {ids[0]}, StatsJson(socks, out_.queueDrops.load(), out_.reportDrops.load()));
  }

  // The timers: the media watch every kWatchMs while publishers are watched, the traffic every
  // kTrafficMs while connections live, the give-back once after connections left.
  void Tick(int64_t now) {
    if (ended_.exchange(false)) GiveBackSoon(now);
    if (giveBackAt_ != 0 && now >= giveBackAt_) GiveBack();
    if (!listener_) return;
    if (watch_->Empty()) watchAt_ = 0;
    else if (watchAt_ == 0) watchAt_ = now + kWatchMs;
    else if (now >= watchAt_) { watchAt_ = now + kWatchMs; CheckMedia(now); }
    if (listener_->Idle()) trafficAt_ = 0;
    else if (trafficAt_ == 0) trafficAt_ = now + kTrafficMs;
    else if (now >= trafficAt_) { trafficAt_ = now + kTrafficMs; listener_->SendTraffic(); }
  }

  // Until the next timer; -1 (no timeout) when none runs: an idle host does not wake by itself.
  int Timeout(int64_t now) const {
    int64_t next = 0;
    for (int64_t at : {watchAt_, trafficAt_, giveBackAt_}) {
      if (at != 0 && (next == 0 || at < next)) next = at;
    }
    if (next == 0) return -1;
    return static_cast<int>(std::max<int64_t>(0, next - now));
  }

  // Publishers without a first media packet within the handshake timeout, without media for the
  // idle timeout, or quiet and not answering the liveness probe (host-watch.h) are closed: their
  // stream ends and its readers with it (libsrt's peer idle timeout only sees silence, not keep-alives).
  void CheckMedia(int64_t now) {
    auto received = [this](SRTSOCKET s) -> int64_t {
      ConnPtr c = listener_->Find(s);
      return c ? static_cast<int64_t>(c->received.load()) : -1;
    };
    for (auto& [sock, why] : watch_->Check(now, received)) Close(sock, why);
  }

  void GiveBackSoon(int64_t now) { giveBackAt_ = now + kGiveBackMs; }

  // What connections that left held goes back to the system once departures stop for a while:
  // glibc keeps the freed pages of libsrt's buffers in its arenas otherwise (issue 46.2).
  void GiveBack() {
    giveBackAt_ = 0;
    in_.Shrink();
    std::string before = RssMb();
    bool trimmed = malloc_trim(0) == 1;
    std::string json = "{\"rss_before_mb\":" + before + ",\"rss_after_mb\":" + RssMb() + ",\"trimmed\":" + (trimmed ? "true" : "false") + "}";
    out_.Send(frames::kLog, {}, {"debug", "the SRT host gave memory back after connections left", json});
  }

  // The service closed the pipe, sent SIGTERM, or went away (or broke the pipe: `code` 1): every
  // connection ends (its peer is told), then the host.
  int Quit(int code) {
    listener_.reset();
    srt_cleanup();
    return code;
  }

  int wake_, sig_;
  frames::Writer out_;
  frames::Reader in_;
  std::unique_ptr<Listener> listener_;
  std::unique_ptr<MediaWatch> watch_;
  std::atomic<bool> ended_{false};  // a connection ended on the worker since the last tick
  int64_t watchAt_ = 0, trafficAt_ = 0, giveBackAt_ = 0;  // 0: not running
};

}  // namespace host

int main() {
  if (fcntl(host::kPipe, F_GETFL) < 0) {
    fprintf(stderr, "srt-host: no pipe on fd 3: the srt plugin starts this program, it is not run by hand\n");
    return 2;
  }
  fcntl(host::kPipe, F_SETFL, fcntl(host::kPipe, F_GETFL) | O_NONBLOCK);
  fcntl(host::kPipe, F_SETFD, FD_CLOEXEC);
  signal(SIGPIPE, SIG_IGN);  // a write to a pipe the service closed fails with EPIPE instead
  // SIGTERM is read from a descriptor the main loop polls; blocked before libsrt starts its
  // threads, so that none of them takes it
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, nullptr);
  int sig = signalfd(-1, &term, SFD_NONBLOCK | SFD_CLOEXEC);
  int wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (sig < 0 || wake < 0) {
    fprintf(stderr, "srt-host: %s\n", strerror(errno));
    return 1;
  }
  srt_startup();
  srt_setloglevel(LOG_CRIT);  // libsrt writes EAGAIN noise to stderr otherwise
  host::Host h(wake, sig);
  return h.Run();
}
