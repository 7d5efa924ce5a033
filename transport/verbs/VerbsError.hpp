// Every verbs failure is a VerbsError whose message names the device (and the peer, where one
// is involved) and the errno text, so a job log says which HCA and which connection failed.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace xmsg::verbs {

class VerbsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "<what> on <device>: <strerror(err)>"
[[noreturn]] void throw_verbs_error(std::string_view what, std::string_view device, int err);

}  // namespace xmsg::verbs
