// Error codes' fixed texts and the per-thread detailed message of the last failure.
#include "xmsg_internal.h"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace {
thread_local std::string last_message;
}

extern "C" const char* xmsg_error_string(int code) {
  switch (code) {
    case XMSG_SUCCESS: return "success";
    case XMSG_ERR_ARG: return "invalid argument";
    case XMSG_ERR_RANK: return "invalid rank";
    case XMSG_ERR_COUNT: return "invalid count";
    case XMSG_ERR_BUFFER: return "invalid buffer";
    case XMSG_ERR_TAG: return "invalid tag";
    case XMSG_ERR_COMM: return "invalid communicator";
    case XMSG_ERR_TYPE: return "invalid datatype";
    case XMSG_ERR_OP: return "invalid reduction operation";
    case XMSG_ERR_ROOT: return "invalid root";
    case XMSG_ERR_REQUEST: return "invalid request";
    case XMSG_ERR_TRUNCATE: return "message truncated";
    case XMSG_ERR_PEER_FAILED: return "peer process failed";
    case XMSG_ERR_NOT_INITIALIZED: return "xmsg is not initialized";
    case XMSG_ERR_NO_MEMORY: return "out of memory";
    case XMSG_ERR_TRANSPORT: return "transport failure";
    case XMSG_ERR_PENDING: return "request pending (another request failed)";
    case XMSG_ERR_INTERNAL: return "internal error";
    default: return "unknown error code";
  }
}

extern "C" const char* xmsg_last_error_message(void) { return last_message.c_str(); }

int xmsgi_error(int code, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  last_message = buf;
  return code;
}
