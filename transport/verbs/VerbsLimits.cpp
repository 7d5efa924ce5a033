#include "VerbsLimits.hpp"

#include <xmsg/bootstrap/parameters.hpp>

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace xmsg::verbs {

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
  limits.srq_depth = static_cast<int>(params::integer("XMSG_VERBS_SRQ_DEPTH"));
  limits.eager_buffer_bytes = static_cast<std::size_t>(params::integer("XMSG_VERBS_EAGER_BUFFER"));
  limits.send_depth = static_cast<int>(params::integer("XMSG_VERBS_SEND_DEPTH"));
  limits.connect_timeout_seconds = static_cast<int>(params::integer("XMSG_VERBS_CONNECT_TIMEOUT"));
  return limits;
}

}  // namespace xmsg::verbs
