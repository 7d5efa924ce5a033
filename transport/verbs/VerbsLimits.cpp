#include "VerbsLimits.hpp"

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace xmsg::verbs {

namespace {

long long read_number(const char* name, long long fallback, long long lo, long long hi) {
  const char* raw = std::getenv(name);
  if (raw == nullptr || *raw == '\0') return fallback;
  std::string_view text(raw);
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument(std::string(name) + ": expected an integer, got '" + std::string(text) + "'");
  }
  if (value < lo || value > hi) {
    throw std::invalid_argument(std::string(name) + ": " + std::to_string(value) + " is outside " +
                                std::to_string(lo) + ".." + std::to_string(hi));
  }
  return value;
}

}  // namespace

void VerbsLimits::validate() const {
  if (srq_depth < 16 || srq_depth > (1 << 20)) {
    throw std::invalid_argument("srq_depth: " + std::to_string(srq_depth) + " is outside 16..1048576");
  }
  if (eager_buffer_bytes < 256 || eager_buffer_bytes > (1u << 20)) {
    throw std::invalid_argument("eager_buffer_bytes: " + std::to_string(eager_buffer_bytes) +
                                " is outside 256..1048576");
  }
  if (send_depth < 4 || send_depth > (1 << 15)) {
    throw std::invalid_argument("send_depth: " + std::to_string(send_depth) + " is outside 4..32768");
  }
  if (connect_timeout_seconds < 1 || connect_timeout_seconds > 3600) {
    throw std::invalid_argument("connect_timeout_seconds: " + std::to_string(connect_timeout_seconds) +
                                " is outside 1..3600");
  }
}

VerbsLimits VerbsLimits::from_environment() {
  VerbsLimits limits;
  limits.srq_depth = static_cast<int>(read_number("XMSG_VERBS_SRQ_DEPTH", kDefaultSrqDepth, 16, 1 << 20));
  limits.eager_buffer_bytes = static_cast<std::size_t>(
      read_number("XMSG_VERBS_EAGER_BUFFER", static_cast<long long>(kDefaultEagerBufferBytes), 256, 1 << 20));
  limits.send_depth = static_cast<int>(read_number("XMSG_VERBS_SEND_DEPTH", kDefaultSendDepth, 4, 1 << 15));
  limits.connect_timeout_seconds = static_cast<int>(
      read_number("XMSG_VERBS_CONNECT_TIMEOUT", kDefaultConnectTimeoutSeconds, 1, 3600));
  return limits;
}

}  // namespace xmsg::verbs
