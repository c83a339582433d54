// What the SRT listener decides in libsrt's handshake callback before a socket exists for the
// service: the streamid's rules (streamid.ts is the tested reference of the same rules), the
// connection caps in total and per client address, and the lockout of an address after wrong
// tokens or passphrases. Plain C++ without N-API; guarded by one mutex.
#pragma once
#include <srt.h>
#include <arpa/inet.h>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace admission {

inline std::string PeerString(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (sa->sa_family == AF_INET) {
    auto in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(in->sin_port));
  }
  auto in6 = reinterpret_cast<const sockaddr_in6*>(sa);
  inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
  return "[" + std::string(buf) + "]:" + std::to_string(ntohs(in6->sin6_port));
}

inline int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Core's `resource[,mode:M][,token:T]` or `#!::r=..,m=..,token=..` after URL-decoding.
// Returns false on a malformed id.
inline bool ParseStreamId(const std::string& raw, std::string& resource, std::string& mode, std::string& token) {
  std::string s;
  for (size_t i = 0; i < raw.size(); i++) {
    if (raw[i] != '%') { s += raw[i]; continue; }
    if (i + 2 >= raw.size() || Hex(raw[i + 1]) < 0 || Hex(raw[i + 2]) < 0) return false;
    s += static_cast<char>(Hex(raw[i + 1]) * 16 + Hex(raw[i + 2]));
    i += 2;
  }
  mode = "request";
  if (s.rfind("#!:", 0) == 0) {
    size_t pos = s.rfind("#!::", 0) == 0 ? 4 : 3;
    while (pos <= s.size()) {
      size_t end = s.find(',', pos);
      if (end == std::string::npos) end = s.size();
      std::string kv = s.substr(pos, end - pos);
      size_t eq = kv.find('=');
      if (eq != std::string::npos) {
        std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
        if (k == "r") resource = v; else if (k == "m") mode = v; else if (k == "token") token = v;
      }
      pos = end + 1;
    }
    return true;
  }
  // current form: a value runs to the next ",mode:" or ",token:"
  auto next = [&](size_t from) {
    size_t a = s.find(",mode:", from), b = s.find(",token:", from);
    return a < b ? a : b;
  };
  size_t cut = next(0);
  resource = s.substr(0, cut);
  while (cut != std::string::npos) {
    bool isMode = s.compare(cut, 6, ",mode:") == 0;
    size_t start = cut + (isMode ? 6 : 7);
    cut = next(start);
    std::string v = s.substr(start, cut == std::string::npos ? std::string::npos : cut - start);
    (isMode ? mode : token) = v;
  }
  return true;
}

// Encryption as configured, from an accepted socket's key state: both directions keyed (with
// srt.passphrase, or a run's passphrase set in the handshake: runs.h), or neither when the
// listener does not encrypt. Empty when it holds, else why not.
inline std::string KeyProblem(SRTSOCKET s, bool encrypted) {
  int rcv = 0, snd = 0, l1 = sizeof rcv, l2 = sizeof snd;
  srt_getsockflag(s, SRTO_RCVKMSTATE, &rcv, &l1);
  srt_getsockflag(s, SRTO_SNDKMSTATE, &snd, &l2);
  if (!encrypted) return rcv == SRT_KM_S_UNSECURED && snd == SRT_KM_S_UNSECURED ? "" : "the caller encrypts but srt.passphrase is empty";
  if (rcv == SRT_KM_S_SECURED && snd == SRT_KM_S_SECURED) return "";
  if (rcv == SRT_KM_S_UNSECURED || snd == SRT_KM_S_UNSECURED) return "no passphrase given";
  return "wrong passphrase";
}

// The stream name rules of streamid.ts `nameProblem`: no control characters, whitespace,
// backslash or '#', no '.' or '..' path segment.
inline bool ValidName(const std::string& name) {
  size_t start = 0;
  for (size_t i = 0; i <= name.size(); i++) {
    if (i == name.size() || name[i] == '/') {
      std::string seg = name.substr(start, i - start);
      if (seg == "." || seg == "..") return false;
      start = i + 1;
      continue;
    }
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x21 || c == 0x7f || c == '\\' || c == '#') return false;
  }
  return true;
}

// The key a per-address rule counts under: the IPv4 address (also IPv4-mapped), or the /64 of an
// IPv6 address. `self` is the service's own address (127.0.0.1, ::1: its processes).
inline std::string AddressKey(const sockaddr* sa, bool& self) {
  char buf[INET6_ADDRSTRLEN] = {0};
  self = false;
  if (sa->sa_family == AF_INET) {
    auto in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    self = std::string(buf) == "127.0.0.1";
    return buf;
  }
  auto in6 = reinterpret_cast<const sockaddr_in6*>(sa);
  const uint8_t* b = in6->sin6_addr.s6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
    inet_ntop(AF_INET, b + 12, buf, sizeof buf);
    self = std::string(buf) == "127.0.0.1";
    return buf;
  }
  self = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
  in6_addr net{};
  for (int i = 0; i < 8; i++) net.s6_addr[i] = b[i];
  inet_ntop(AF_INET6, &net, buf, sizeof buf);
  return std::string(buf) + "/64";
}

struct Limits {
  int maxTotal = 300;
  int maxPerAddress = 20;
  int64_t failBaseMs = 1000;  // 0: no lockout
  int64_t failMaxMs = 30000;
};

// Addresses with failures remembered at most; when full, those no longer locked out make room, and
// while every entry is locked out a new address is not kept (its next failure tries again).
constexpr size_t kMaxFailEntries = 10000;
// An address's failures are forgotten this long after its last one.
constexpr int64_t kForgetMs = 15 * 60 * 1000;

class Gate {
 public:
  explicit Gate(Limits l) : limits_(l) {}

  static int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

  // 0 when a new connection from `key` may proceed, else SRT_REJX_OVERLOAD with `why` set.
  int Admit(const std::string& key, bool self, std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!self) {
      auto f = fails_.find(key);
      if (f != fails_.end() && f->second.until > NowMs()) { why = "locked out after wrong tokens or passphrases"; return 1402; }
    }
    if (total_ >= limits_.maxTotal) { why = "too many connections (srt.max_connections)"; return 1402; }
    auto c = perAddress_.find(key);
    if (!self && c != perAddress_.end() && c->second >= limits_.maxPerAddress) {
      why = "too many connections from this address (srt.max_connections_per_address)";
      return 1402;
    }
    return 0;
  }

  void Opened(SRTSOCKET s, const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!sockets_.emplace(s, key).second) return;
    total_++;
    perAddress_[key]++;
  }

  // Sockets open: handshakes admitted and accepted connections.
  int Open() {
    std::lock_guard<std::mutex> lock(mu_);
    return total_;
  }

  void Closed(SRTSOCKET s) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sockets_.find(s);
    if (it == sockets_.end()) return;
    total_--;
    auto c = perAddress_.find(it->second);
    if (c != perAddress_.end() && --c->second <= 0) perAddress_.erase(c);
    sockets_.erase(it);
  }

  // A wrong token or passphrase: the address is locked out for a delay that doubles per failure.
  void Failed(const std::string& key, bool self) {
    if (self || limits_.failBaseMs <= 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    int64_t now = NowMs();
    auto it = fails_.find(key);
    if (it == fails_.end()) {
      if (fails_.size() >= kMaxFailEntries) Prune(now);
      if (fails_.size() >= kMaxFailEntries) return;
      it = fails_.emplace(key, Fail{}).first;
    }
    Fail& f = it->second;
    if (now - f.last >= kForgetMs) f.count = 0;
    f.count++;
    f.last = now;
    int shift = f.count - 1 < 30 ? f.count - 1 : 30;
    int64_t delay = limits_.failBaseMs << shift;
    f.until = now + (delay > limits_.failMaxMs || delay <= 0 ? limits_.failMaxMs : delay);
  }

  void Succeeded(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    fails_.erase(key);
  }

  // Gives back the slots of sockets libsrt no longer has (a handshake that failed after the
  // callback). libsrt is asked without the gate's lock: its callback takes that lock under libsrt's.
  void Sweep() {
    std::vector<SRTSOCKET> ids;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& kv : sockets_) ids.push_back(kv.first);
    }
    for (SRTSOCKET s : ids) {
      SRT_SOCKSTATUS st = srt_getsockstate(s);
      if (st == SRTS_NONEXIST || st == SRTS_CLOSED || st == SRTS_BROKEN || st == SRTS_CLOSING) Closed(s);
    }
  }

 private:
  struct Fail { int count = 0; int64_t last = 0; int64_t until = 0; };

  void Prune(int64_t now) {
    for (auto it = fails_.begin(); it != fails_.end();) {
      if (it->second.until <= now) it = fails_.erase(it);
      else ++it;
    }
  }

  Limits limits_;
  std::mutex mu_;
  int total_ = 0;
  std::unordered_map<std::string, int> perAddress_;
  std::map<SRTSOCKET, std::string> sockets_;
  std::unordered_map<std::string, Fail> fails_;
};

}  // namespace admission
