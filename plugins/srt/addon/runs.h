// The children's run credentials (issue 43.4), pushed by the service (RUNS): a process the service
// starts calls with its run's token in the streamid instead of srt.token, and when the listener
// encrypts, with a passphrase of its run instead of srt.passphrase. The token admits it only to
// the streams its command names, in the mode it names them. Checked in libsrt's handshake
// callback, where the run's passphrase is set on the new socket (libsrt keys it with that one).
#pragma once
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

namespace runs {

struct Run {
  std::string passphrase;
  std::set<std::string> grants;  // "<mode> <resource>"
};

class Table {
 public:
  // The whole table of runs, by token, replacing the last (RUNS: token, passphrase, grants).
  void Set(std::unordered_map<std::string, Run> next) {
    std::lock_guard<std::mutex> lock(mu_);
    runs_.swap(next);
  }

  // The IAM users with a passphrase of their own (issue 49.3), by name, replacing the last (USERS).
  // A user's key `<user>:<token>` is keyed with its user's passphrase (the key itself is decided
  // by the service after accept); other users keep srt.passphrase.
  void SetUsers(std::unordered_map<std::string, std::string> next) {
    std::lock_guard<std::mutex> lock(mu_);
    users_.swap(next);
  }

  // Whether the user of a key `<user>:<token>` has a passphrase of its own (then in `passphrase`).
  bool UserPassphrase(const std::string& key, std::string& passphrase) {
    size_t colon = key.find(':');
    if (colon == std::string::npos) return false;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = users_.find(key.substr(0, colon));
    if (it == users_.end()) return false;
    passphrase = it->second;
    return true;
  }

  // -1: not a live run's token; 0: a run's token that does not name this stream in this mode;
  // 1: admitted, `passphrase` is the run's.
  int Check(const std::string& token, const std::string& resource, const std::string& mode, std::string& passphrase) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = runs_.find(token);
    if (it == runs_.end()) return -1;
    if (it->second.grants.count(mode + " " + resource) == 0) return 0;
    passphrase = it->second.passphrase;
    return 1;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, Run> runs_;
  std::unordered_map<std::string, std::string> users_;
};

}  // namespace runs
