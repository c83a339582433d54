/*
 * malloc_trim(3) for the service (core/runtime/malloc-trim.ts): glibc keeps what the runtime's
 * threads freed in their arenas, and gives whole free pages back only when asked. A Node-API
 * module of one function, written against Node-API's stable C ABI with the few declarations it
 * needs, so it builds with a bare C compiler and no Node.js headers (scripts/ensure-trim.sh, the
 * Dockerfile). Without it the service runs the same, keeping that memory.
 */
#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef int napi_status;
typedef napi_value (*napi_callback)(napi_env env, napi_callback_info info);

extern napi_status napi_create_function(napi_env env, const char *name, size_t length, napi_callback cb, void *data, napi_value *result);
extern napi_status napi_set_named_property(napi_env env, napi_value object, const char *name, napi_value value);
extern napi_status napi_get_boolean(napi_env env, bool value, napi_value *result);

#define NAPI_AUTO_LENGTH SIZE_MAX

/* trim(): true when memory was given back to the system. */
static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result = NULL;
  napi_get_boolean(env, malloc_trim(0) == 1, &result);
  return result;
}

__attribute__((visibility("default"))) int32_t node_api_module_get_api_version_v1(void) { return 8; }

__attribute__((visibility("default"))) napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  napi_value fn = NULL;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn) != 0) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != 0) return NULL;
  return exports;
}
