#include "VerbsError.hpp"

#include <cstring>

namespace xmsg::verbs {

void throw_verbs_error(std::string_view what, std::string_view device, int err) {
  std::string message(what);
  message += " on ";
  message += device.empty() ? std::string_view("<no device>") : device;
  if (err != 0) {
    message += ": ";
    message += std::strerror(err);
    if (err == EOPNOTSUPP) message += " (the device does not support this operation)";
  }
  throw VerbsError(message);
}

}  // namespace xmsg::verbs
