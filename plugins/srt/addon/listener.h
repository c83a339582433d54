// The host's SRT listener. libsrt's handshake callback decides what can be decided before a socket
// exists for the service (admission.h: the streamid's rules, the caps, the lockout; runs.h: the
// children's run credentials; the names the service pushed: one publisher per name, requests
// only for names that are there). A worker thread runs libsrt's epoll: accepts, publishers' media
// and ends go to the service as frames. The main thread sends to subscribers and closes.
#pragma once
#include <srt.h>
#include <access_control.h>
#include "admission.h"
#include "host-pipe.h"
#include "prefilter.h"
#include "runs.h"
#include "srt-io.h"
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace host {

// libsrt's receive thread's wait for a datagram while no socket is open (see Listener::Quiet); a
// stop also wakes it with a datagram of its own (Listener::WakeReceiver).
constexpr long kQuietTimeoutMs = 4000;

// START's fields, in protocol.ts's START_FIELDS order.
struct Settings {
  std::string host, passphrase, token;
  int port = 0, latencyMs = 120, peerIdleMs = 0;
  admission::Limits limits;
  bool userKeys = false;
  int64_t handshakeMs = 5000, idleMs = 10000;
};

// One accepted connection: what the main thread queued to it and dropped (a subscriber), what the
// worker received (a publisher, for the media watch). Shared so either thread may end it.
struct Conn {
  std::atomic<uint64_t> sent{0}, dropped{0}, received{0};
  int stalls = 0;  // chunks in a row its send buffer refused entirely (main thread only)
};

using ConnPtr = std::shared_ptr<Conn>;

class Listener {
 public:
  // `changed(ended)`: the worker accepted a connection or one ended (the main thread's timers follow).
  Listener(const Settings& s, frames::Writer& out, std::function<void(bool)> changed)
      : s_(s), out_(out), changed_(std::move(changed)), gate_(s.limits) {}
  ~Listener() { Stop(); }

  // Binds, listens and starts the worker: the bound port, or -1 with `why`.
  int Start(std::string& why) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (!srtio::Address(s_.host, s_.port, ss, len)) { why = "not an IP address: " + s_.host; return -1; }
    lsn_ = srt_create_socket();
    bool no = false;
    srt_setsockflag(lsn_, SRTO_RCVSYN, &no, sizeof no);  // inherited by accepted sockets
    srt_setsockflag(lsn_, SRTO_SNDSYN, &no, sizeof no);
    srt_setsockflag(lsn_, SRTO_LATENCY, &s_.latencyMs, sizeof s_.latencyMs);
    if (ss.ss_family == AF_INET6) { int only = 0; srt_setsockflag(lsn_, SRTO_IPV6ONLY, &only, sizeof only); }
    if (!s_.passphrase.empty()) srt_setsockflag(lsn_, SRTO_PASSPHRASE, s_.passphrase.c_str(), s_.passphrase.size());
    // libsrt would refuse a wrong passphrase silently; accepted, the socket's key state tells, and
    // AcceptAll closes it with a report and a failure for the address's lockout
    srt_setsockflag(lsn_, SRTO_ENFORCEDENCRYPTION, &no, sizeof no);
    if (s_.peerIdleMs > 0) srt_setsockflag(lsn_, SRTO_PEERIDLETIMEO, &s_.peerIdleMs, sizeof s_.peerIdleMs);
    int udp = prefilter::Socket(reinterpret_cast<sockaddr*>(&ss), len, why);  // handshakes that crash libsrt never reach it
    int acquired = udp < 0 ? SRT_ERROR : srt_bind_acquire(lsn_, udp);
    if (acquired == SRT_ERROR || srt_listen(lsn_, 64) == SRT_ERROR) {
      if (udp >= 0 && why.empty()) why = srt_getlasterror_str();
      if (udp >= 0 && acquired == SRT_ERROR) close(udp);
      srt_close(lsn_);
      lsn_ = SRT_INVALID_SOCK;
      return -1;
    }
    srt_listen_callback(lsn_, &Listener::OnHandshake, this);
    udp_ = udp;
    socklen_t tlen = sizeof busyTimeout_;
    getsockopt(udp_, SOL_SOCKET, SO_RCVTIMEO, &busyTimeout_, &tlen);  // what libsrt set
    sockaddr_storage& bound = bound_;
    int blen = sizeof bound;
    srt_getsockname(lsn_, reinterpret_cast<sockaddr*>(&bound), &blen);
    eid_ = srt_epoll_create();
    int ev = SRT_EPOLL_IN | SRT_EPOLL_ERR;
    srt_epoll_add_usock(eid_, lsn_, &ev);
    running_ = true;
    worker_ = std::thread([this] { Run(); });
    return ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }

  // Joins the worker (it never waits longer than one epoll wait), then closes every socket.
  void Stop() {
    if (!running_.exchange(false)) return;
    {
      std::lock_guard<std::mutex> lock(idleMu_);
      Quiet(false);
    }
    WakeReceiver();
    idle_.notify_one();
    worker_.join();
    std::map<SRTSOCKET, ConnPtr> live;
    { std::lock_guard<std::mutex> lock(connsMu_); live.swap(conns_); }
    for (auto& kv : live) srt_close(kv.first);
    srt_epoll_release(eid_);
    eid_ = -1;
    srt_close(lsn_);
    lsn_ = SRT_INVALID_SOCK;
  }

  // NAMES: the names with a live publisher (a second publisher is refused, a request admitted)
  // and those readable without one yet (on-demand: a request is admitted and waits).
  void SetNames(std::set<std::string> live, std::set<std::string> readable) {
    std::lock_guard<std::mutex> lock(namesMu_);
    publishers_.swap(live);
    readable_.swap(readable);
  }

  runs::Table& Runs() { return runs_; }

  ConnPtr Find(SRTSOCKET s) {
    std::lock_guard<std::mutex> lock(connsMu_);
    auto it = conns_.find(s);
    return it == conns_.end() ? nullptr : it->second;
  }

  bool Idle() {
    std::lock_guard<std::mutex> lock(connsMu_);
    return conns_.empty();
  }

  // Ends a live connection from this side: with `why`, the service is told (CLOSED, by the host);
  // without, the service asked (CLOSE). False when it was not live (it ended on its own already).
  bool Close(SRTSOCKET s, const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(connsMu_);
      auto it = conns_.find(s);
      if (it == conns_.end()) return false;
      if (!why.empty()) out_.Send(frames::kClosed, {Id(s)}, Ended(why, "host", *it->second));
      conns_.erase(it);
    }
    srt_epoll_remove_usock(eid_, s);
    srt_close(s);
    gate_.Closed(s);
    return true;
  }

  // TRAFFIC's JSON: `[[socket, sent, dropped], ...]`, queued under the connections' lock so that
  // it never names a connection the service was told ended, nor one it was not told of yet.
  void SendTraffic() {
    std::lock_guard<std::mutex> lock(connsMu_);
    std::string json = "[";
    for (auto& kv : conns_) {
      if (json.size() > 1) json += ',';
      json += "[" + std::to_string(kv.first) + "," + std::to_string(kv.second->sent.load()) + "," + std::to_string(kv.second->dropped.load()) + "]";
    }
    out_.Send(frames::kTraffic, {}, json + "]");
  }

  static uint32_t Id(SRTSOCKET s) { return static_cast<uint32_t>(s); }

  // CLOSED's fields: why, by whom (`peer` | `host`), bytes sent, bytes dropped.
  static frames::Fields Ended(const std::string& why, const char* by, const Conn& c) {
    return {why, by, std::to_string(c.sent.load()), std::to_string(c.dropped.load())};
  }

 private:
  // libsrt's receive thread, before the socket is accepted: only the pushed-down facts decide.
  static int OnHandshake(void* opaque, SRTSOCKET ns, int hsversion, const sockaddr* peer, const char* sid) {
    auto* self = static_cast<Listener*>(opaque);
    std::string raw = sid ? sid : "", resource, mode, token, why;
    bool own = false;
    std::string key = admission::AddressKey(peer, own);
    int code = self->gate_.Admit(key, own, why);
    if (code == 0 && hsversion < 5 && raw.empty()) return self->Opened(ns, key), 0;  // SRT v4: named after its address (by the service)
    if (code != 0) {
    } else if (!admission::ParseStreamId(raw, resource, mode, token) || resource.empty()) {
      code = SRT_REJX_BAD_REQUEST; why = resource.empty() ? "streamid names no resource" : "streamid is not validly URL-encoded";
    } else if (!admission::ValidName(resource)) {
      code = SRT_REJX_BAD_REQUEST; why = "invalid stream name";
    } else if (mode != "publish" && mode != "request") {
      code = SRT_REJX_BAD_MODE; why = "unknown mode";
    } else if ((code = self->TokenRule(ns, key, own, resource, mode, token, why)) != 0) {
    } else {
      std::lock_guard<std::mutex> lock(self->namesMu_);
      bool live = self->publishers_.count(resource) > 0;
      if (mode == "publish" && live) { code = SRT_REJX_CONFLICT; why = "already publishing"; }
      if (mode == "request" && !live && self->readable_.count(resource) == 0) { code = SRT_REJX_NOTFOUND; why = "nothing publishes this stream"; }
    }
    if (code == 0) return self->Opened(ns, key), 0;  // counted from here: a slot per handshake in flight
    srt_setrejectreason(ns, code);
    self->Reject(ns, raw.substr(0, 512), peer, code, why);
    return -1;
  }

  // srt.token, or a child's run token for a stream its command names (keyed with its run's passphrase).
  int TokenRule(SRTSOCKET ns, const std::string& key, bool own, const std::string& resource, const std::string& mode,
                const std::string& token, std::string& why) {
    std::string pass;
    int run = token.empty() ? -1 : runs_.Check(token, resource, mode, pass);
    if (run == 0) { why = "the run's credential does not name this stream"; return SRT_REJX_FORBIDDEN; }
    if (run == 1) {
      if (!s_.passphrase.empty()) srt_setsockflag(ns, SRTO_PASSPHRASE, pass.c_str(), static_cast<int>(pass.size()));
      return 0;
    }
    // a user's key `<user>:<token>` (userKeys: the iam plugin runs): the service decides it after
    // accept; keyed with its user's own passphrase where it has one (and the listener encrypts)
    bool user = s_.userKeys && token != s_.token && token.find(':') != std::string::npos;
    if (user && !s_.passphrase.empty() && runs_.UserPassphrase(token, pass)) srt_setsockflag(ns, SRTO_PASSPHRASE, pass.c_str(), static_cast<int>(pass.size()));
    if (s_.token.empty() || s_.token == token || user) return 0;
    why = token.empty() ? "no token given" : "wrong token";
    gate_.Failed(key, own);
    return SRT_REJX_UNAUTHORIZED;
  }

  // A refusal for the service's log; dropped (counted) when the pipe is behind, so a flood of
  // handshakes costs no memory.
  void Reject(SRTSOCKET s, const std::string& sid, const sockaddr* peer, int code, const std::string& why) {
    out_.Send(frames::kReject, {Id(s)}, {sid, admission::PeerString(peer), std::to_string(code), why}, frames::Class::kReport);
  }

  // A handshake admitted: its slot counts from here, and the worker wakes for its accept.
  void Opened(SRTSOCKET ns, const std::string& key) {
    gate_.Opened(ns, key);
    {
      // under the worker's lock: a worker that saw no socket and made the wait long has done so
      // by now, and this undoes it (outside it, the long wait could outlast this handshake)
      std::lock_guard<std::mutex> lock(idleMu_);
      Quiet(false);
    }
    idle_.notify_one();
  }

  // The worker sleeps while no socket is open: libsrt's epoll wait looks every 10 ms whatever its
  // timeout, 100 wake-ups a second on an idle box (issue 46.2: idle CPU). A handshake the callback
  // admits wakes it; one it refuses does not.
  bool AwaitWork() {
    std::unique_lock<std::mutex> lock(idleMu_);
    if (running_ && gate_.Open() == 0) Quiet(true);  // never after Stop undid it
    idle_.wait(lock, [this] { return !running_ || gate_.Open() > 0; });
    return running_;
  }

  // libsrt's receive thread waits for datagrams in recvmsg with the socket's receive timeout
  // (100 us, a few ms once the kernel rounds it: 125 wake-ups a second) and runs its connections'
  // timers between. With no socket open there are no timers: it may wait longer (a datagram still
  // wakes it at once, and the handshake that opens a socket, on that thread, shortens it again).
  // A stop wakes it (WakeReceiver). libsrt 1.5.1's cleanup was measured not to wait for this
  // timeout (the host ended 100-200 ms after SIGTERM without the wake); the wake keeps a stop
  // from depending on that.
  void Quiet(bool quiet) {
    if (udp_ < 0 || quiet == quiet_.exchange(quiet)) return;
    timeval t = quiet ? timeval{kQuietTimeoutMs / 1000, (kQuietTimeoutMs % 1000) * 1000} : busyTimeout_;
    setsockopt(udp_, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
  }

  // A stop: libsrt's receive thread may be in its quiet wait; one datagram to the listener's own
  // port (a data packet for socket 0, which libsrt drops; the prefilter passes data packets)
  // returns it to its loop, which now waits its short timeout and sees the close at once.
  void WakeReceiver() {
    sockaddr_storage to = bound_;
    socklen_t len = sizeof(sockaddr_in);
    if (to.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&to);
      if (IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr)) a->sin6_addr = in6addr_loopback;
      len = sizeof(sockaddr_in6);
    } else if (to.ss_family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&to);
      if (a->sin_addr.s_addr == htonl(INADDR_ANY)) a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else {
      return;
    }
    int fd = socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    const char zero[16] = {};
    sendto(fd, zero, sizeof zero, 0, reinterpret_cast<sockaddr*>(&to), len);
    close(fd);
  }

  void Run() {
    std::vector<SRT_EPOLL_EVENT> ready(256);
    std::string data;
    int64_t swept = admission::Gate::NowMs();
    while (AwaitWork()) {
      // slots of handshakes that never reached accept (the caller gave up) are given back
      if (admission::Gate::NowMs() - swept >= 1000) { swept = admission::Gate::NowMs(); gate_.Sweep(); }
      int n = srt_epoll_uwait(eid_, ready.data(), static_cast<int>(ready.size()), 100);
      for (int i = 0; i < n; i++) {
        SRTSOCKET s = ready[i].fd;
        if (s == lsn_) { AcceptAll(); continue; }
        data.clear();
        bool broken = srtio::Receive(s, (ready[i].events & SRT_EPOLL_ERR) != 0, data);
        if (!data.empty()) Published(s, data);
        if (broken) Broken(s);
      }
    }
  }

  // A publisher's media, up to 64 messages in one frame. Dropped (counted) when the pipe is behind:
  // live media is not worth growing without bound. Queued under the connections' lock: nothing
  // of a connection goes out after the host ended it.
  void Published(SRTSOCKET s, const std::string& data) {
    std::lock_guard<std::mutex> lock(connsMu_);
    auto it = conns_.find(s);
    if (it == conns_.end()) return;
    it->second->received += data.size();
    out_.Send(frames::kPublished, {Id(s)}, data.data(), data.size(), frames::Class::kMedia);
  }

  // The peer closed or broke the connection (a connection the main thread closed is gone already).
  void Broken(SRTSOCKET s) {
    SRT_SOCKSTATUS st = srt_getsockstate(s);
    bool live = false;
    {
      std::lock_guard<std::mutex> lock(connsMu_);
      auto it = conns_.find(s);
      if (it != conns_.end()) {
        live = true;
        out_.Send(frames::kClosed, {Id(s)}, Ended(st == SRTS_BROKEN ? "broken" : "closed", "peer", *it->second));
        conns_.erase(it);
      }
    }
    srt_epoll_remove_usock(eid_, s);
    if (!live) return;
    srt_close(s);
    gate_.Closed(s);
    changed_(true);
  }

  void AcceptAll() {
    for (;;) {
      sockaddr_storage ss{};
      int len = sizeof ss;
      SRTSOCKET s = srt_accept(lsn_, reinterpret_cast<sockaddr*>(&ss), &len);
      if (s == SRT_INVALID_SOCK) return;
      char sid[513] = {0};
      int sidlen = sizeof sid - 1;
      srt_getsockflag(s, SRTO_STREAMID, sid, &sidlen);
      auto* peer = reinterpret_cast<sockaddr*>(&ss);
      bool own = false;
      std::string key = admission::AddressKey(peer, own);
      std::string why = admission::KeyProblem(s, !s_.passphrase.empty());
      if (!why.empty()) {
        srt_close(s);
        gate_.Closed(s);
        gate_.Failed(key, own);
        Reject(s, std::string(sid, sidlen), peer, s_.passphrase.empty() ? SRT_REJ_UNSECURE : SRT_REJ_BADSECRET, why);
        changed_(true);  // libsrt made its buffers all the same
        continue;
      }
      gate_.Opened(s, key);
      int ev = SRT_EPOLL_IN | SRT_EPOLL_ERR;
      srt_epoll_add_usock(eid_, s, &ev);
      {
        std::lock_guard<std::mutex> lock(connsMu_);
        conns_.emplace(s, std::make_shared<Conn>());
        out_.Send(frames::kAccept, {Id(s)}, {std::string(sid, sidlen), admission::PeerString(peer)});
      }
      changed_(false);
    }
  }

  Settings s_;
  frames::Writer& out_;
  std::function<void(bool)> changed_;
  admission::Gate gate_;
  runs::Table runs_;
  SRTSOCKET lsn_ = SRT_INVALID_SOCK;
  int eid_ = -1;
  std::atomic<bool> running_{false};
  std::thread worker_;
  std::mutex idleMu_;
  std::condition_variable idle_;
  int udp_ = -1;  // the listener's UDP socket (libsrt's, once acquired)
  sockaddr_storage bound_{};  // its address
  timeval busyTimeout_{};
  std::atomic<bool> quiet_{false};
  std::mutex namesMu_;
  std::set<std::string> publishers_, readable_;
  std::mutex connsMu_;
  std::map<SRTSOCKET, ConnPtr> conns_;  // accepted and not ended
};

}  // namespace host
