// The listener's UDP socket, made here and handed to libsrt (srt_bind_acquire), with a classic
// BPF filter the kernel runs on every datagram before libsrt sees it. It drops the SRT handshakes
// that crash libsrt 1.5.1 (found by test/plugins/srt/fuzz.test.ts, reduced in fuzz-crashes.ts):
// - an MSS below kMinMss: libsrt writes its answer into a packet of the peer's MSS and overruns
//   the heap (CUDT::acceptAndRespond -> fillSrtHandshake);
// - a packet-filter extension block (SRT_CMD_FILTER): an empty one crashes SrtParseConfig, and
//   this service does not offer packet filters (FEC) at all;
// - extension blocks running past the datagram, or more than kMaxBlocks of them.
// Everything else passes unchanged; media and control packets cost one load and one compare.
#pragma once
#include <linux/filter.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace prefilter {

// The kernel runs a UDP socket's filter on the datagram from its UDP header on.
constexpr uint32_t kUdp = 8;
// Below this no real caller goes (IPv4's minimum datagram; live mode needs about 1360).
constexpr uint32_t kMinMss = 576;
// Extension blocks a handshake may carry (a real one has up to six).
constexpr int kMaxBlocks = 16;
constexpr uint32_t kFilterBlock = 7;  // SRT_CMD_FILTER

struct Builder {
  std::vector<sock_filter> code;
  std::vector<std::pair<size_t, int>> fixups;  // (instruction, 0 = accept / 1 = drop on true, 2 = on false)
  void op(uint16_t c, uint32_t k) { code.push_back(sock_filter{c, 0, 0, k}); }
  // a conditional jump: when `cond` holds (or does not, per `onTrue`), go to accept or drop
  void jump(uint16_t c, uint32_t k, bool onTrue, bool drop) {
    code.push_back(sock_filter{static_cast<uint16_t>(BPF_JMP | c | BPF_K), 0, 0, k});
    fixups.push_back({code.size() - 1, (drop ? 1 : 0) | (onTrue ? 0 : 2)});
  }
  std::vector<sock_filter> finish() {
    size_t accept = code.size(), drop = code.size() + 1;
    op(BPF_RET | BPF_K, 0xffffffff);
    op(BPF_RET | BPF_K, 0);
    for (auto [at, how] : fixups) {
      size_t to = ((how & 1) ? drop : accept) - at - 1;
      if (to > 255) return {};  // a jump cBPF cannot take: no filter (Socket fails loudly)
      if (how & 2) code[at].jf = static_cast<uint8_t>(to); else code[at].jt = static_cast<uint8_t>(to);
    }
    return code;
  }
};

inline std::vector<sock_filter> Program() {
  Builder b;
  b.op(BPF_LD | BPF_H | BPF_ABS, kUdp);               // SRT word 0, high half
  b.jump(BPF_JEQ, 0x8000, false, false);              // not a handshake: accept
  b.op(BPF_LD | BPF_W | BPF_LEN, 0);
  b.jump(BPF_JGE, kUdp + 32, false, false);           // too short to carry an MSS: libsrt refuses it
  b.op(BPF_LD | BPF_W | BPF_ABS, kUdp + 28);          // the MSS
  b.jump(BPF_JGE, kMinMss, false, true);              // below the floor: drop
  b.op(BPF_LDX | BPF_W | BPF_IMM, kUdp + 64);         // X: the first extension block
  for (int i = 0; i <= kMaxBlocks; i++) {
    b.op(BPF_LD | BPF_W | BPF_LEN, 0);
    b.op(BPF_ALU | BPF_SUB | BPF_X, 0);               // bytes left from X (wraps when X is past the end)
    b.jump(BPF_JGE, 4, false, false);                 // no further block: accept
    if (i == kMaxBlocks) break;
    b.op(BPF_LD | BPF_W | BPF_LEN, 0);
    b.op(BPF_ALU | BPF_SUB | BPF_X, 0);
    b.jump(BPF_JGT, 0xffff, true, true);              // X past the end (wrapped): malformed, drop
    b.op(BPF_LD | BPF_H | BPF_IND, 0);                // block type
    b.jump(BPF_JEQ, kFilterBlock, true, true);
    b.op(BPF_LD | BPF_H | BPF_IND, 2);                // block length in 32-bit words
    b.op(BPF_ALU | BPF_LSH | BPF_K, 2);
    b.op(BPF_ALU | BPF_ADD | BPF_K, 4);
    b.op(BPF_ALU | BPF_ADD | BPF_X, 0);
    b.op(BPF_MISC | BPF_TAX, 0);
  }
  // more blocks than any real handshake carries
  b.op(BPF_RET | BPF_K, 0);
  return b.finish();
}

// A bound UDP socket with the filter attached, or -1 with `why`.
inline int Socket(const sockaddr* sa, socklen_t len, std::string& why) {
  int fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) { why = strerror(errno); return -1; }
  if (sa->sa_family == AF_INET6) { int no = 0; setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no); }
  std::vector<sock_filter> code = Program();
  if (code.empty()) { why = "the handshake filter does not fit classic BPF"; close(fd); return -1; }
  sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) != 0 || bind(fd, sa, len) != 0) {
    why = strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace prefilter
