// What the host tells the service as JSON (STATS_OF, the give-back LOG line): libsrt's statistics
// by its own names (stats.h) and the process's resident memory.
#pragma once
#include <srt.h>
#include "stats.h"
#include <unistd.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

namespace host {

// A JSON number; NaN and infinity (which JSON cannot carry) as 0.
template <class T>
void Number(std::string& out, T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(v)) { out += '0'; return; }
    // the shortest of 15 or 17 digits that reads back the same (0.1, not 0.10000000000000001)
    char b[32];
    snprintf(b, sizeof b, "%.15g", static_cast<double>(v));
    if (strtod(b, nullptr) != static_cast<double>(v)) snprintf(b, sizeof b, "%.17g", static_cast<double>(v));
    out += b;
  } else {
    out += std::to_string(v);
  }
}

// STATS_OF's JSON: `{"<socket>": {<srt_bstats names>, queueDrops, reportDrops}}` for each socket
// libsrt still knows (the others are left out: the service reads them as gone).
inline std::string StatsJson(const std::vector<SRTSOCKET>& socks, uint64_t queueDrops, uint64_t reportDrops) {
  std::string out = "{";
  for (SRTSOCKET s : socks) {
    SRT_TRACEBSTATS p{};
    if (srt_bstats(s, &p, 0) == SRT_ERROR) continue;
    if (out.size() > 1) out += ',';
    out += "\"" + std::to_string(s) + "\":{";
#define F(name) out += "\"" #name "\":"; Number(out, p.name); out += ',';
    SRT_STATS_FIELDS(F)
#undef F
    out += "\"queueDrops\":" + std::to_string(queueDrops) + ",\"reportDrops\":" + std::to_string(reportDrops) + "}";
  }
  return out + "}";
}

// The resident set in MB (10^6 bytes) with one decimal, as the service's log writes it (`12.3`).
inline std::string RssMb() {
  long pages = 0, resident = 0;
  FILE* f = fopen("/proc/self/statm", "r");
  if (f != nullptr) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  long long tenths = std::llround(static_cast<double>(resident) * sysconf(_SC_PAGESIZE) / 1e5);
  std::string out = std::to_string(tenths / 10);
  if (tenths % 10 != 0) out += "." + std::to_string(tenths % 10);
  return out;
}

}  // namespace host
