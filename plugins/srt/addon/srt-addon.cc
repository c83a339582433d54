// A thin N-API binding over libsrt for the `srt` plugin: one listener, accepted sockets driven by
// libsrt's epoll on the addon's own thread, events to JS through a bounded ThreadSafeFunction.
// Media logic (routing, MPEG-TS, fan-out) lives in TypeScript; C++ only keeps what must be
// answered synchronously in libsrt's handshake callback (token, run credentials, publishers, reject codes).
#include <napi.h>
#include <srt.h>
#include <access_control.h>
#include "admission.h"
#include "event.h"
#include "prefilter.h"
#include "runs.h"
#include "stats.h"
#include "trim.h"
#include <arpa/inet.h>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

class Server : public Napi::ObjectWrap<Server> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports) {
    Napi::Function ctor = DefineClass(env, "SrtServer", {
      InstanceMethod("start", &Server::Start), InstanceMethod("stop", &Server::Stop),
      InstanceMethod("send", &Server::Send), InstanceMethod("close", &Server::Close),
      InstanceMethod("stats", &Server::Stats), InstanceMethod("setPublishers", &Server::SetPublishers),
      InstanceMethod("setRuns", &Server::SetRuns), InstanceMethod("setUsers", &Server::SetUsers),
    });
    exports.Set("SrtServer", ctor);
    exports.Set("version", Napi::Number::New(env, srt_getversion()));
    return exports;
  }

  // new SrtServer({host, port, latencyMs, passphrase, token, queue}, onEvent)
  explicit Server(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Server>(info) {
    Napi::Object o = info[0].As<Napi::Object>();
    host_ = o.Get("host").As<Napi::String>();
    port_ = o.Get("port").As<Napi::Number>().Int32Value();
    latencyMs_ = o.Get("latencyMs").As<Napi::Number>().Int32Value();
    passphrase_ = o.Get("passphrase").As<Napi::String>();
    token_ = o.Get("token").As<Napi::String>();
    userKeys_ = o.Has("userKeys") && o.Get("userKeys").ToBoolean().Value();
    queue_ = o.Get("queue").As<Napi::Number>().Uint32Value();
    admission::Limits l;
    if (o.Has("maxConnections")) l.maxTotal = o.Get("maxConnections").As<Napi::Number>().Int32Value();
    if (o.Has("maxPerAddress")) l.maxPerAddress = o.Get("maxPerAddress").As<Napi::Number>().Int32Value();
    if (o.Has("failBaseMs")) l.failBaseMs = o.Get("failBaseMs").As<Napi::Number>().Int64Value();
    if (o.Has("failMaxMs")) l.failMaxMs = o.Get("failMaxMs").As<Napi::Number>().Int64Value();
    if (o.Has("peerIdleMs")) peerIdleMs_ = o.Get("peerIdleMs").As<Napi::Number>().Int32Value();
    if (o.Has("localHost")) localHost_ = o.Get("localHost").As<Napi::String>();
    gate_ = std::make_unique<admission::Gate>(l);
    if (o.Has("streamid")) { caller_ = true; streamid_ = o.Get("streamid").As<Napi::String>(); }
    onEvent_ = Napi::Persistent(info[1].As<Napi::Function>());
  }
  ~Server() { Shutdown(); }

 private:
  Napi::Value Start(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    sockaddr_storage ss{};
    socklen_t len = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (inet_pton(AF_INET, host_.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET; v4->sin_port = htons(port_); len = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, host_.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6; v6->sin6_port = htons(port_); len = sizeof(sockaddr_in6);
    } else {
      Napi::Error::New(env, "not an IP address: " + host_).ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (caller_) return Connect(env, ss, len);
    lsn_ = srt_create_socket();
    bool no = false;
    srt_setsockflag(lsn_, SRTO_RCVSYN, &no, sizeof no);  // inherited by accepted sockets
    srt_setsockflag(lsn_, SRTO_SNDSYN, &no, sizeof no);
    srt_setsockflag(lsn_, SRTO_LATENCY, &latencyMs_, sizeof latencyMs_);
    if (ss.ss_family == AF_INET6) { int only = 0; srt_setsockflag(lsn_, SRTO_IPV6ONLY, &only, sizeof only); }
    if (!passphrase_.empty()) srt_setsockflag(lsn_, SRTO_PASSPHRASE, passphrase_.c_str(), passphrase_.size());
    // libsrt would refuse a wrong passphrase silently; accepted, the socket's key state tells, and
    // AcceptAll closes it with a log line and a failure for the address's lockout
    srt_setsockflag(lsn_, SRTO_ENFORCEDENCRYPTION, &no, sizeof no);
    if (peerIdleMs_ > 0) srt_setsockflag(lsn_, SRTO_PEERIDLETIMEO, &peerIdleMs_, sizeof peerIdleMs_);
    std::string why;
    int udp = prefilter::Socket(reinterpret_cast<sockaddr*>(&ss), len, why);  // handshakes that crash libsrt never reach it
    int acquired = udp < 0 ? SRT_ERROR : srt_bind_acquire(lsn_, udp);
    if (acquired == SRT_ERROR || srt_listen(lsn_, 64) == SRT_ERROR) {
      if (udp >= 0 && why.empty()) why = srt_getlasterror_str();
      if (udp >= 0 && acquired == SRT_ERROR) close(udp);
      srt_close(lsn_);
      lsn_ = SRT_INVALID_SOCK;
      Napi::Error::New(env, why).ThrowAsJavaScriptException();
      return env.Undefined();
    }
    srt_listen_callback(lsn_, &Server::OnHandshake, this);
    sockaddr_storage bound{};
    int blen = sizeof bound;
    srt_getsockname(lsn_, reinterpret_cast<sockaddr*>(&bound), &blen);
    int port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                 : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    eid_ = srt_epoll_create();
    int ev = SRT_EPOLL_IN | SRT_EPOLL_ERR;
    srt_epoll_add_usock(eid_, lsn_, &ev);
    Launch(env);
    return Napi::Number::New(env, port);
  }

  // The event queue and the worker; an env cleanup hook stops them if the process exits without stop().
  void Launch(Napi::Env env) {
    tsfn_ = Napi::ThreadSafeFunction::New(env, onEvent_.Value(), "srt-events", queue_, 1);
    tsfn_.Unref(env);
    running_ = true;
    worker_ = std::thread([this] { Run(); });
    env_ = env;
    napi_add_env_cleanup_hook(env, &Server::EnvCleanup, this);
    hooked_ = true;
  }

  static void EnvCleanup(void* arg) {
    auto* self = static_cast<Server*>(arg);
    self->hooked_ = false;
    self->Shutdown();
  }

  // The caller side, for the tests and the benchmark's light subscribers (not used by the service):
  // a blocking connect that reports libsrt's reject reason, then the same worker as the listener.
  Napi::Value Connect(Napi::Env env, sockaddr_storage& ss, socklen_t len) {
    SRTSOCKET s = srt_create_socket();
    bool yes = true, no = false;
    srt_setsockflag(s, SRTO_RCVSYN, &yes, sizeof yes);
    srt_setsockflag(s, SRTO_LATENCY, &latencyMs_, sizeof latencyMs_);
    srt_setsockflag(s, SRTO_STREAMID, streamid_.c_str(), streamid_.size());
    if (!passphrase_.empty()) srt_setsockflag(s, SRTO_PASSPHRASE, passphrase_.c_str(), passphrase_.size());
    if (!localHost_.empty()) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      inet_pton(AF_INET, localHost_.c_str(), &local.sin_addr);
      srt_bind(s, reinterpret_cast<sockaddr*>(&local), sizeof local);
    }
    if (srt_connect(s, reinterpret_cast<sockaddr*>(&ss), len) == SRT_ERROR) {
      int reason = srt_getrejectreason(s);
      Napi::Error err = Napi::Error::New(env, std::string(srt_getlasterror_str()) + " (" + srt_rejectreason_str(reason) + ")");
      err.Set("reject", Napi::Number::New(env, reason));
      srt_close(s);
      err.ThrowAsJavaScriptException();
      return env.Undefined();
    }
    srt_setsockflag(s, SRTO_RCVSYN, &no, sizeof no);
    srt_setsockflag(s, SRTO_SNDSYN, &no, sizeof no);
    eid_ = srt_epoll_create();
    int ev = SRT_EPOLL_IN | SRT_EPOLL_ERR;
    srt_epoll_add_usock(eid_, s, &ev);
    { std::lock_guard<std::mutex> lock(mu_); conns_.insert(s); }
    Launch(env);
    return Napi::Number::New(env, s);
  }

  // libsrt's receive thread, before the socket is accepted: no JS here, only the pushed-down facts.
  static int OnHandshake(void* opaque, SRTSOCKET ns, int hsversion, const sockaddr* peer, const char* sid) {
    auto* self = static_cast<Server*>(opaque);
    std::string raw = sid ? sid : "", resource, mode, token, why;
    bool own = false;
    std::string key = admission::AddressKey(peer, own);
    int code = self->gate_->Admit(key, own, why);
    if (code == 0 && hsversion < 5 && raw.empty()) return self->gate_->Opened(ns, key), 0;  // SRT v4: named after its address (TS side)
    if (code != 0) {
    } else if (!admission::ParseStreamId(raw, resource, mode, token) || resource.empty()) {
      code = SRT_REJX_BAD_REQUEST; why = resource.empty() ? "streamid names no resource" : "streamid is not validly URL-encoded";
    } else if (!admission::ValidName(resource)) {
      code = SRT_REJX_BAD_REQUEST; why = "invalid stream name";
    } else if (mode != "publish" && mode != "request") {
      code = SRT_REJX_BAD_MODE; why = "unknown mode";
    } else if ((code = self->TokenRule(ns, key, own, resource, mode, token, why)) != 0) {
    } else {
      std::lock_guard<std::mutex> lock(self->mu_);
      bool live = self->publishers_.count(resource) > 0;
      if (mode == "publish" && live) { code = SRT_REJX_CONFLICT; why = "already publishing"; }
      if (mode == "request" && !live && self->readable_.count(resource) == 0) { code = SRT_REJX_NOTFOUND; why = "nothing publishes this stream"; }
    }
    if (code == 0) return self->gate_->Opened(ns, key), 0;  // counted from here: a slot per handshake in flight
    srt_setrejectreason(ns, code);
    self->Report(new Event{"reject", ns, raw.substr(0, 512), admission::PeerString(peer), code, {}, why});
    return -1;
  }

  // srt.token, or a child's run token for a stream its command names (keyed with its run's passphrase).
  int TokenRule(SRTSOCKET ns, const std::string& key, bool own, const std::string& resource, const std::string& mode,
                const std::string& token, std::string& why) {
    std::string pass;
    int run = token.empty() ? -1 : runs_.Check(token, resource, mode, pass);
    if (run == 0) { why = "the run's credential does not name this stream"; return SRT_REJX_FORBIDDEN; }
    if (run == 1) {
      if (!passphrase_.empty()) srt_setsockflag(ns, SRTO_PASSPHRASE, pass.c_str(), static_cast<int>(pass.size()));
      return 0;
    }
    // a user's key `<user>:<token>` (userKeys: the iam plugin runs): the service decides it after
    // accept; keyed with its user's own passphrase where it has one (and the listener encrypts)
    bool user = userKeys_ && token != token_ && token.find(':') != std::string::npos;
    if (user && !passphrase_.empty() && runs_.UserPassphrase(token, pass)) srt_setsockflag(ns, SRTO_PASSPHRASE, pass.c_str(), static_cast<int>(pass.size()));
    if (token_.empty() || token == token_ || user) return 0;
    why = token.empty() ? "no token given" : "wrong token";
    gate_->Failed(key, own);
    return SRT_REJX_UNAUTHORIZED;
  }

  // A refusal for JS's log; dropped (not queued) when JS is behind, so a flood costs no memory.
  void Report(Event* e) {
    if (tsfn_.NonBlockingCall(e, &Server::Deliver) != napi_ok) { delete e; reportDrops_++; }
  }

  // JS pushes the names with a live publisher (second publishers refused, requests admitted) and,
  // optionally, names that are not live but readable (on-demand: a request waits for the publisher).
  Napi::Value SetPublishers(const Napi::CallbackInfo& info) {
    std::set<std::string> names, readable;
    Napi::Array a = info[0].As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) names.insert(a.Get(i).As<Napi::String>());
    if (info.Length() > 1 && info[1].IsArray()) {
      Napi::Array r = info[1].As<Napi::Array>();
      for (uint32_t i = 0; i < r.Length(); i++) readable.insert(r.Get(i).As<Napi::String>());
    }
    std::lock_guard<std::mutex> lock(mu_);
    publishers_.swap(names);
    readable_.swap(readable);
    return info.Env().Undefined();
  }

  void Run() {
    std::deque<Event*> backlog;  // control events waiting for room in the JS queue
    std::vector<SRT_EPOLL_EVENT> ready(256);
    int64_t swept = admission::Gate::NowMs();
    while (running_) {
      // slots of handshakes that never reached accept (the caller gave up) are given back
      if (admission::Gate::NowMs() - swept >= 1000) { swept = admission::Gate::NowMs(); gate_->Sweep(); }
      while (!backlog.empty() && tsfn_.NonBlockingCall(backlog.front(), &Server::Deliver) == napi_ok) backlog.pop_front();
      int n = srt_epoll_uwait(eid_, ready.data(), static_cast<int>(ready.size()), 100);
      for (int i = 0; i < n; i++) {
        SRTSOCKET s = ready[i].fd;
        if (s == lsn_) { AcceptAll(backlog); continue; }
        auto* data = new Event{"data", s, "", "", 0, {}, ""};
        bool broken = (ready[i].events & SRT_EPOLL_ERR) != 0;
        char buf[1500];
        for (int k = 0; k < 64 && !broken; k++) {
          int got = srt_recvmsg(s, buf, sizeof buf);
          if (got > 0) { data->data.insert(data->data.end(), buf, buf + got); continue; }
          if (got == SRT_ERROR && srt_getlasterror(nullptr) != SRT_EASYNCRCV) broken = true;
          break;
        }
        // data is live media: when JS is behind, drop it and count rather than grow without bound;
        // behind a waiting control event it waits too, so each socket's events stay in order
        if (data->data.empty()) delete data;
        else if (!backlog.empty() && backlog.size() < queue_) backlog.push_back(data);
        else if (!backlog.empty() || tsfn_.NonBlockingCall(data, &Server::Deliver) != napi_ok) { delete data; queueDrops_++; }
        if (broken) {
          SRT_SOCKSTATUS st = srt_getsockstate(s);
          srt_epoll_remove_usock(eid_, s);
          srt_close(s);
          { std::lock_guard<std::mutex> lock(mu_); conns_.erase(s); }
          gate_->Closed(s);
          backlog.push_back(new Event{"close", s, st == SRTS_BROKEN ? "broken" : "closed", "", 0, {}, ""});
        }
      }
    }
    for (Event* e : backlog) delete e;
  }

  void AcceptAll(std::deque<Event*>& backlog) {
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
      std::string why = admission::KeyProblem(s, !passphrase_.empty());
      if (!why.empty()) {
        srt_close(s);
        gate_->Closed(s);
        gate_->Failed(key, own);
        Report(new Event{"reject", s, std::string(sid, sidlen), admission::PeerString(peer), passphrase_.empty() ? SRT_REJ_UNSECURE : SRT_REJ_BADSECRET, {}, why});
        continue;
      }
      gate_->Opened(s, key);
      int ev = SRT_EPOLL_IN | SRT_EPOLL_ERR;
      srt_epoll_add_usock(eid_, s, &ev);
      { std::lock_guard<std::mutex> lock(mu_); conns_.insert(s); }
      backlog.push_back(new Event{"accept", s, std::string(sid, sidlen), admission::PeerString(peer), 0, {}, ""});
    }
  }

  static void Deliver(Napi::Env env, Napi::Function fn, Event* e) {
    if (env != nullptr && fn != nullptr) {
      Napi::Value extra = e->type == "data"
        ? Napi::Value(Napi::Buffer<char>::Copy(env, e->data.data(), e->data.size()))
        : Napi::Value(Napi::String::New(env, e->peer));
      fn.Call({Napi::String::New(env, e->type), Napi::Number::New(env, e->id), Napi::String::New(env, e->text), extra,
               Napi::Number::New(env, e->code), Napi::String::New(env, e->why)});
    }
    delete e;
  }

  // send(id, buffer) -> bytes queued; splits into 1316-byte messages, never blocks.
  Napi::Value Send(const Napi::CallbackInfo& info) {
    SRTSOCKET s = info[0].As<Napi::Number>().Int32Value();
    Napi::Buffer<char> b = info[1].As<Napi::Buffer<char>>();
    size_t off = 0;
    while (off < b.Length()) {
      int chunk = static_cast<int>(std::min<size_t>(SRT_LIVE_DEF_PLSIZE, b.Length() - off));
      if (srt_sendmsg2(s, b.Data() + off, chunk, nullptr) == SRT_ERROR) break;
      off += chunk;
    }
    return Napi::Number::New(info.Env(), static_cast<double>(off));
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    SRTSOCKET s = info[0].As<Napi::Number>().Int32Value();
    if (eid_ != -1) srt_epoll_remove_usock(eid_, s);
    srt_close(s);
    gate_->Closed(s);
    std::lock_guard<std::mutex> lock(mu_);
    conns_.erase(s);
    return info.Env().Undefined();
  }

  // stats(id) -> libsrt's own names (stats.h).
  Napi::Value Stats(const Napi::CallbackInfo& info) {
    return stats::Of(info.Env(), info[0].As<Napi::Number>().Int32Value(), queueDrops_.load(), reportDrops_.load());
  }

  // setRuns(list): the children's run credentials (runs.h).
  Napi::Value SetRuns(const Napi::CallbackInfo& info) { runs_.Set(info[0].As<Napi::Array>()); return info.Env().Undefined(); }
  Napi::Value SetUsers(const Napi::CallbackInfo& info) { runs_.SetUsers(info[0].As<Napi::Object>()); return info.Env().Undefined(); }

  Napi::Value Stop(const Napi::CallbackInfo& info) {
    Shutdown();
    return info.Env().Undefined();
  }

  // Joins the worker (it never blocks longer than one epoll wait), then closes every socket.
  void Shutdown() {
    if (!running_.exchange(false)) return;
    if (hooked_) { napi_remove_env_cleanup_hook(env_, &Server::EnvCleanup, this); hooked_ = false; }
    worker_.join();
    std::set<SRTSOCKET> live;
    { std::lock_guard<std::mutex> lock(mu_); live.swap(conns_); }
    for (SRTSOCKET s : live) srt_close(s);
    srt_epoll_release(eid_);
    eid_ = -1;
    if (lsn_ != SRT_INVALID_SOCK) srt_close(lsn_);
    lsn_ = SRT_INVALID_SOCK;
    tsfn_.Release();
  }

  std::string host_, passphrase_, token_, streamid_, localHost_;
  bool userKeys_ = false;
  int peerIdleMs_ = 0;
  std::unique_ptr<admission::Gate> gate_;
  runs::Table runs_;
  std::atomic<uint64_t> reportDrops_{0};
  bool caller_ = false;
  bool hooked_ = false;
  napi_env env_ = nullptr;
  int port_ = 0, latencyMs_ = 120;
  uint32_t queue_ = 4096;
  Napi::FunctionReference onEvent_;
  Napi::ThreadSafeFunction tsfn_;
  SRTSOCKET lsn_ = SRT_INVALID_SOCK;
  int eid_ = -1;
  std::atomic<bool> running_{false};
  std::atomic<uint64_t> queueDrops_{0};
  std::thread worker_;
  std::mutex mu_;
  std::set<std::string> publishers_;
  std::set<std::string> readable_;
  std::set<SRTSOCKET> conns_;  // accepted and not yet closed
};

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  srt_startup();
  srt_setloglevel(LOG_CRIT);  // libsrt writes EAGAIN noise to stderr otherwise
  exports.Set("trim", Napi::Function::New(env, Trim));
  return Server::Init(env, exports);
}

NODE_API_MODULE(srt_addon, Init)
