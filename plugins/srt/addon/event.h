#pragma once
#include <srt.h>
#include <string>
#include <vector>

// One event for JS: accept, data, close, reject. Built on the worker, consumed on the JS thread.
struct Event {
  std::string type;
  SRTSOCKET id = SRT_INVALID_SOCK;
  std::string text;  // accept: streamid; close: reason; reject: streamid
  std::string peer;
  int code = 0;
  std::vector<char> data;
  std::string why;  // reject: the reason in words
};
