// The host's pipe to the service (fd 3, a unix socketpair both ways), as host/protocol.ts and
// host/media-pipe.ts define it: frames of `kind` u8, `count` u16, `length` u32, `count` u32 ids,
// then `length` bytes; a control frame's bytes are fields, each a u32 length and its bytes.
// Integers big-endian. Read on the main thread; written from any thread through one outbox.
#pragma once
#include <sys/uio.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace frames {

enum Kind : uint8_t {
  kPublished = 1, kDeliver = 2,
  kStart = 10, kClose = 11, kWatch = 12, kNames = 13, kRuns = 14, kUsers = 15, kStats = 16,
  kListening = 20, kFailed = 21, kAccept = 22, kClosed = 23, kReject = 24, kStatsOf = 25, kTraffic = 26, kLog = 27,
  kRunsSet = 28,
};

constexpr size_t kHead = 7;
// A frame announcing more is not the service's (a chunk is at most a few MiB): the pipe is broken.
constexpr uint32_t kMaxFrame = 64u << 20;

using Ids = std::vector<uint32_t>;
using Fields = std::vector<std::string>;

inline void PutU32(std::string& out, uint32_t v) {
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(b, 4);
}

inline uint32_t GetU32(const char* p) {
  auto b = reinterpret_cast<const uint8_t*>(p);
  return uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
}

inline std::string Encode(const Fields& fields) {
  std::string out;
  for (const std::string& f : fields) { PutU32(out, static_cast<uint32_t>(f.size())); out += f; }
  return out;
}

// False when the bytes are not fields (the frame is ignored: the service is checked, not trusted).
inline bool Decode(const char* p, size_t n, Fields& out) {
  size_t at = 0;
  while (at < n) {
    if (n - at < 4) return false;
    uint32_t len = GetU32(p + at);
    if (len > n - at - 4) return false;
    out.emplace_back(p + at + 4, len);
    at += 4 + len;
  }
  return true;
}

// What a frame may cost when the service does not read: media is dropped beyond 8 MiB queued,
// refusal reports beyond 1 MiB (a handshake flood must not grow the host); the rest (accepts,
// ends, answers) always queue, as the service's state follows them and they are few.
enum class Class { kMedia, kReport, kControl };
constexpr size_t kMediaRoom = 8u << 20;
constexpr size_t kReportRoom = 1u << 20;

class Writer {
 public:
  // `wake`: an eventfd the main thread polls, told when the outbox starts holding bytes (it then
  // waits for room on the pipe too) or the service is found gone.
  Writer(int fd, int wake) : fd_(fd), wake_(wake) {}

  // Writes what the pipe takes now and keeps the rest; false when dropped (or the service is gone).
  bool Send(uint8_t kind, const Ids& ids, const char* data, size_t len, Class cls) {
    std::string head;
    head.push_back(static_cast<char>(kind));
    head.push_back(static_cast<char>(ids.size() >> 8));
    head.push_back(static_cast<char>(ids.size()));
    PutU32(head, static_cast<uint32_t>(len));
    for (uint32_t id : ids) PutU32(head, id);
    std::lock_guard<std::mutex> lock(mu_);
    if (gone_) return false;
    if (cls == Class::kMedia && queued_ > kMediaRoom) return queueDrops++, false;
    if (cls == Class::kReport && queued_ > kReportRoom) return reportDrops++, false;
    size_t done = 0;
    if (outbox_.empty()) {
      iovec v[2] = {{head.data(), head.size()}, {const_cast<char*>(data), len}};
      if (!Write(v, 2, done)) return false;
    }
    if (done == head.size() + len) return true;
    std::string rest = done < head.size() ? head.substr(done) + std::string(data, len) : std::string(data + done - head.size(), len - (done - head.size()));
    if (outbox_.empty()) Wake();
    queued_ += rest.size();
    outbox_.push_back(std::move(rest));
    return true;
  }

  bool Send(uint8_t kind, const Ids& ids, const Fields& fields, Class cls = Class::kControl) {
    std::string data = Encode(fields);
    return Send(kind, ids, data.data(), data.size(), cls);
  }

  bool Send(uint8_t kind, const Ids& ids, const std::string& data) {
    return Send(kind, ids, data.data(), data.size(), Class::kControl);
  }

  // The main thread, when the pipe has room: writes from the outbox until it is empty or full.
  void Flush() {
    std::lock_guard<std::mutex> lock(mu_);
    while (!outbox_.empty() && !gone_) {
      iovec v[64];
      int n = 0;
      for (auto it = outbox_.begin(); it != outbox_.end() && n < 64; ++it, ++n) v[n] = {it->data(), it->size()};
      v[0] = {outbox_.front().data() + front_, outbox_.front().size() - front_};
      size_t done = 0;
      if (!Write(v, n, done) || done == 0) return;
      queued_ -= done;
      while (done > 0) {
        size_t left = outbox_.front().size() - front_;
        if (done < left) { front_ += done; break; }
        done -= left;
        front_ = 0;
        outbox_.pop_front();
      }
    }
  }

  bool Pending() {
    std::lock_guard<std::mutex> lock(mu_);
    return !outbox_.empty();
  }

  bool Gone() const { return gone_; }

  std::atomic<uint64_t> queueDrops{0};   // PUBLISHED frames dropped
  std::atomic<uint64_t> reportDrops{0};  // REJECT frames dropped

 private:
  // One non-blocking write; false when the service is gone (EPIPE, a reset: it closed its end).
  bool Write(iovec* v, int n, size_t& done) {
    ssize_t w;
    do w = writev(fd_, v, n); while (w < 0 && errno == EINTR);
    if (w >= 0) { done = static_cast<size_t>(w); return true; }
    if (errno == EAGAIN || errno == EWOULDBLOCK) { done = 0; return true; }
    gone_ = true;
    outbox_.clear();
    queued_ = 0;
    Wake();
    return false;
  }

  void Wake() {
    uint64_t one = 1;
    ssize_t r = write(wake_, &one, sizeof one);
    (void)r;  // a full eventfd is already a wake-up
  }

  int fd_, wake_;
  std::mutex mu_;
  std::deque<std::string> outbox_;
  size_t front_ = 0;  // bytes of the outbox's first frame already written
  size_t queued_ = 0;
  std::atomic<bool> gone_{false};
};

// Frames as they arrive, possibly in pieces; a frame is handed out whole, its bytes in place.
class Reader {
 public:
  enum Result { kMore, kEof, kTooLong };

  // Reads what fd holds, up to 1 MiB (a service that keeps sending must not starve the host's
  // timers and writes: poll() says when more is there), and hands each whole frame to
  // `on(kind, ids, data, len)`; kEof when the service closed its end (or the read failed).
  template <class On>
  Result Read(int fd, On on) {
    for (int i = 0; i < 16; i++) {
      size_t old = buf_.size();
      buf_.resize(old + kChunk);
      ssize_t n = read(fd, &buf_[old], kChunk);
      buf_.resize(old + (n > 0 ? n : 0));
      if (n == 0) return kEof;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? Parse(on) : kEof;
      Result r = Parse(on);
      if (r != kMore) return r;
    }
    return kMore;
  }

  // The room a burst of large frames left (the host gives memory back when it is quiet).
  void Shrink() {
    if (buf_.empty()) std::string().swap(buf_);
  }

 private:
  static constexpr size_t kChunk = 64 * 1024;

  template <class On>
  Result Parse(On on) {
    size_t at = 0;
    Ids ids;
    while (buf_.size() - at >= kHead) {
      const char* p = buf_.data() + at;
      size_t count = static_cast<uint8_t>(p[1]) << 8 | static_cast<uint8_t>(p[2]);
      uint32_t len = GetU32(p + 3);
      if (len > kMaxFrame) return kTooLong;
      size_t whole = kHead + 4 * count + len;
      if (buf_.size() - at < whole) {
        buf_.reserve(at + whole);  // one growth for a large frame, not one per piece
        break;
      }
      ids.clear();
      for (size_t i = 0; i < count; i++) ids.push_back(GetU32(p + kHead + 4 * i));
      on(static_cast<uint8_t>(p[0]), ids, p + kHead + 4 * count, static_cast<size_t>(len));
      at += whole;
    }
    buf_.erase(0, at);
    return kMore;
  }

  std::string buf_;
};

}  // namespace frames
