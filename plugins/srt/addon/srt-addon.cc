// A thin N-API binding over libsrt's caller side, for the tests and the benchmarks' light
// publishers and subscribers: one connection per object, driven by libsrt's epoll on the addon's
// own thread, events to JS through a bounded ThreadSafeFunction. The service itself never loads
// it: its SRT listener runs in the host program (host.cc).
#include <napi.h>
#include <srt.h>
#include "srt-io.h"
#include "stats.h"
#include <atomic>
#include <string>
#include <thread>

namespace {

// One event for JS, built on the worker: `data` (the bytes) or `close` (`closed` | `broken`).
struct Event {
  const char* type;
  SRTSOCKET id;
  std::string text;
  std::string data;
};

class Caller : public Napi::ObjectWrap<Caller> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports) {
    Napi::Function ctor = DefineClass(env, "SrtServer", {
      InstanceMethod("start", &Caller::Start), InstanceMethod("stop", &Caller::Stop),
      InstanceMethod("send", &Caller::Send), InstanceMethod("close", &Caller::Close),
      InstanceMethod("stats", &Caller::Stats),
    });
    exports.Set("SrtServer", ctor);
    exports.Set("version", Napi::Number::New(env, srt_getversion()));
    return exports;
  }

  // new SrtServer({host, port, latencyMs, passphrase, queue, streamid, localHost?}, onEvent); a `token`
  // is taken and unused (a caller gives its token in the streamid)
  explicit Caller(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Caller>(info) {
    Napi::Object o = info[0].As<Napi::Object>();
    host_ = o.Get("host").As<Napi::String>();
    port_ = o.Get("port").As<Napi::Number>().Int32Value();
    latencyMs_ = o.Get("latencyMs").As<Napi::Number>().Int32Value();
    passphrase_ = o.Get("passphrase").As<Napi::String>();
    queue_ = o.Get("queue").As<Napi::Number>().Uint32Value();
    if (o.Has("streamid")) streamid_ = o.Get("streamid").As<Napi::String>();
    if (o.Has("localHost")) localHost_ = o.Get("localHost").As<Napi::String>();
    onEvent_ = Napi::Persistent(info[1].As<Napi::Function>());
  }
  ~Caller() { Shutdown(); }

 private:
  // start() -> the socket id: a blocking connect that reports libsrt's reject reason (`reject`).
  Napi::Value Start(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (!srtio::Address(host_, port_, ss, len)) {
      Napi::Error::New(env, "not an IP address: " + host_).ThrowAsJavaScriptException();
      return env.Undefined();
    }
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
    srt_epoll_set(eid_, SRT_EPOLL_ENABLE_EMPTY);  // after the close the worker waits, not spins
    int ev = SRT_EPOLL_IN | SRT_EPOLL_ERR;
    srt_epoll_add_usock(eid_, s, &ev);
    sock_ = s;
    Launch(env);
    return Napi::Number::New(env, s);
  }

  // The event queue and the worker; an env cleanup hook stops them if the process exits without stop().
  void Launch(Napi::Env env) {
    tsfn_ = Napi::ThreadSafeFunction::New(env, onEvent_.Value(), "srt-events", queue_, 1);
    tsfn_.Unref(env);
    running_ = true;
    worker_ = std::thread([this] { Run(); });
    env_ = env;
    napi_add_env_cleanup_hook(env, &Caller::EnvCleanup, this);
    hooked_ = true;
  }

  static void EnvCleanup(void* arg) {
    auto* self = static_cast<Caller*>(arg);
    self->hooked_ = false;
    self->Shutdown();
  }

  void Run() {
    Event* closing = nullptr;  // the close event, waiting for room in the JS queue (never dropped)
    SRT_EPOLL_EVENT ready[2];
    while (running_) {
      if (closing != nullptr && tsfn_.NonBlockingCall(closing, &Caller::Deliver) == napi_ok) closing = nullptr;
      int n = srt_epoll_uwait(eid_, ready, 2, 100);
      for (int i = 0; i < n; i++) {
        SRTSOCKET s = ready[i].fd;
        auto* data = new Event{"data", s, "", ""};
        bool broken = srtio::Receive(s, (ready[i].events & SRT_EPOLL_ERR) != 0, data->data);
        // data is live media: when JS is behind, drop it and count rather than grow without bound
        if (data->data.empty()) delete data;
        else if (tsfn_.NonBlockingCall(data, &Caller::Deliver) != napi_ok) { delete data; queueDrops_++; }
        if (broken) {
          SRT_SOCKSTATUS st = srt_getsockstate(s);
          srt_epoll_remove_usock(eid_, s);
          srt_close(s);
          sock_ = SRT_INVALID_SOCK;
          closing = new Event{"close", s, st == SRTS_BROKEN ? "broken" : "closed", ""};
        }
      }
    }
    delete closing;
  }

  // `(type, id, text, extra)`: data -> extra = the bytes; close -> text = `closed` | `broken`.
  static void Deliver(Napi::Env env, Napi::Function fn, Event* e) {
    if (env != nullptr && fn != nullptr) {
      Napi::Value extra = e->data.empty() ? Napi::Value(Napi::String::New(env, ""))
                                          : Napi::Value(Napi::Buffer<char>::Copy(env, e->data.data(), e->data.size()));
      fn.Call({Napi::String::New(env, e->type), Napi::Number::New(env, e->id), Napi::String::New(env, e->text), extra});
    }
    delete e;
  }

  // send(id, buffer) -> bytes queued; splits into 1316-byte messages, never blocks.
  Napi::Value Send(const Napi::CallbackInfo& info) {
    SRTSOCKET s = info[0].As<Napi::Number>().Int32Value();
    Napi::Buffer<char> b = info[1].As<Napi::Buffer<char>>();
    return Napi::Number::New(info.Env(), static_cast<double>(srtio::Send(s, b.Data(), b.Length())));
  }

  // close(id): no close event follows.
  Napi::Value Close(const Napi::CallbackInfo& info) {
    SRTSOCKET s = info[0].As<Napi::Number>().Int32Value();
    if (eid_ != -1) srt_epoll_remove_usock(eid_, s);
    srt_close(s);
    if (s == sock_) sock_ = SRT_INVALID_SOCK;
    return info.Env().Undefined();
  }

  // stats(id) -> libsrt's own names (stats.h), with the media dropped while JS was behind; null
  // when the socket is gone.
  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    SRT_TRACEBSTATS p{};
    if (srt_bstats(info[0].As<Napi::Number>().Int32Value(), &p, 0) == SRT_ERROR) return env.Null();
    Napi::Object o = Napi::Object::New(env);
#define F(name) o.Set(#name, Napi::Number::New(env, static_cast<double>(p.name)));
    SRT_STATS_FIELDS(F)
#undef F
    o.Set("queueDrops", Napi::Number::New(env, static_cast<double>(queueDrops_.load())));
    return o;
  }

  Napi::Value Stop(const Napi::CallbackInfo& info) {
    Shutdown();
    return info.Env().Undefined();
  }

  // Joins the worker (it never waits longer than one epoll wait), then closes the connection.
  void Shutdown() {
    if (!running_.exchange(false)) return;
    if (hooked_) { napi_remove_env_cleanup_hook(env_, &Caller::EnvCleanup, this); hooked_ = false; }
    worker_.join();
    if (sock_ != SRT_INVALID_SOCK) srt_close(sock_);
    sock_ = SRT_INVALID_SOCK;
    srt_epoll_release(eid_);
    eid_ = -1;
    tsfn_.Release();
  }

  std::string host_, passphrase_, streamid_, localHost_;
  int port_ = 0, latencyMs_ = 120;
  uint32_t queue_ = 4096;
  bool hooked_ = false;
  napi_env env_ = nullptr;
  Napi::FunctionReference onEvent_;
  Napi::ThreadSafeFunction tsfn_;
  std::atomic<SRTSOCKET> sock_{SRT_INVALID_SOCK};
  int eid_ = -1;
  std::atomic<bool> running_{false};
  std::atomic<uint64_t> queueDrops_{0};
  std::thread worker_;
};

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  srt_startup();
  srt_setloglevel(LOG_CRIT);  // libsrt writes EAGAIN noise to stderr otherwise
  return Caller::Init(env, exports);
}

NODE_API_MODULE(srt_addon, Init)
