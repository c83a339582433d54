// What the host (its listener, host.cc) and the addon (its caller, srt-addon.cc) both do with
// libsrt: the address to bind or call, and live media both ways (cut into messages, read as a
// ready socket holds it).
#pragma once
#include <srt.h>
#include <arpa/inet.h>
#include <algorithm>
#include <cstddef>
#include <string>

namespace srtio {

// An IPv4 or IPv6 address and a port; false when `host` is not an IP address (no name lookup:
// the settings name addresses).
inline bool Address(const std::string& host, int port, sockaddr_storage& ss, socklen_t& len) {
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET; v4->sin_port = htons(port); len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6; v6->sin6_port = htons(port); len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

// Queues bytes in live-mode messages (1316 bytes: seven MPEG-TS packets) without blocking; stops
// at the first refusal (a full send buffer, a closed socket). Returns the bytes queued.
inline size_t Send(SRTSOCKET s, const char* data, size_t len) {
  size_t off = 0;
  while (off < len) {
    int chunk = static_cast<int>(std::min<size_t>(SRT_LIVE_DEF_PLSIZE, len - off));
    if (srt_sendmsg2(s, data + off, chunk, nullptr) == SRT_ERROR) break;
    off += chunk;
  }
  return off;
}

// Appends up to 64 messages a ready socket holds to `out` (one event's worth: a busy publisher
// cannot starve the others); true when the socket is broken (`broken`: epoll said so already).
inline bool Receive(SRTSOCKET s, bool broken, std::string& out) {
  char buf[1500];
  for (int k = 0; k < 64 && !broken; k++) {
    int got = srt_recvmsg(s, buf, sizeof buf);
    if (got > 0) { out.append(buf, got); continue; }
    if (got == SRT_ERROR && srt_getlasterror(nullptr) != SRT_EASYNCRCV) broken = true;
    break;
  }
  return broken;
}

}  // namespace srtio
