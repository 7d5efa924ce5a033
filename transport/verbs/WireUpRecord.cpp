#include "WireUpRecord.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace xmsg::verbs {

std::vector<std::byte> WireUpRecord::encode() const {
  WireUpHeader h = header;
  h.magic = kWireUpMagic;
  h.version = kWireUpVersion;
  h.qp_count = static_cast<std::uint32_t>(qps.size());
  std::vector<std::byte> out(encoded_size(qps.size()));
  std::memcpy(out.data(), &h, sizeof h);
  if (!qps.empty()) std::memcpy(out.data() + sizeof h, qps.data(), qps.size() * sizeof(WireUpQp));
  return out;
}

WireUpRecord WireUpRecord::decode(std::span<const std::byte> bytes, int publisher_rank) {
  const std::string who = "verbs wire-up record of rank " + std::to_string(publisher_rank);
  if (bytes.size() < sizeof(WireUpHeader)) {
    throw std::runtime_error(who + " is " + std::to_string(bytes.size()) + " bytes, shorter than its header (" +
                             std::to_string(sizeof(WireUpHeader)) + ")");
  }
  WireUpRecord record;
  std::memcpy(&record.header, bytes.data(), sizeof(WireUpHeader));
  if (record.header.magic != kWireUpMagic) throw std::runtime_error(who + " has a bad magic number");
  if (record.header.version != kWireUpVersion) {
    throw std::runtime_error(who + " has version " + std::to_string(record.header.version) + ", expected " +
                             std::to_string(kWireUpVersion) + " (mixed xmsg builds?)");
  }
  const std::size_t expected = encoded_size(record.header.qp_count);
  if (bytes.size() != expected) {
    throw std::runtime_error(who + " is " + std::to_string(bytes.size()) + " bytes but announces " +
                             std::to_string(record.header.qp_count) + " QPs (" + std::to_string(expected) + " bytes)");
  }
  record.qps.resize(record.header.qp_count);
  if (!record.qps.empty()) {
    std::memcpy(record.qps.data(), bytes.data() + sizeof(WireUpHeader), record.qps.size() * sizeof(WireUpQp));
  }
  return record;
}

}  // namespace xmsg::verbs
