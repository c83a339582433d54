#pragma once
#include <malloc.h>
#include <napi.h>

// trim(): glibc gives the free pages of the host's arenas back to the system (what the buffers of
// closed connections left there; issue 46.2); true when some were.
inline Napi::Value Trim(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), malloc_trim(0) == 1);
}
