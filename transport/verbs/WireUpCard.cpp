#include "WireUpCard.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace xmsg::verbs {

std::vector<std::byte> WireUpCard::encode() const {
  WireUpCard c = *this;
  c.magic = kWireUpCardMagic;
  c.version = kWireUpCardVersion;
  c.reserved = 0;
  c.reserved2 = 0;
  std::vector<std::byte> out(sizeof c);
  std::memcpy(out.data(), &c, sizeof c);
  return out;
}

WireUpCard WireUpCard::decode(std::span<const std::byte> bytes, int publisher_rank) {
  const std::string who = "verbs wire-up card of rank " + std::to_string(publisher_rank);
  if (bytes.size() != sizeof(WireUpCard)) {
    throw std::runtime_error(who + " is " + std::to_string(bytes.size()) + " bytes, expected " +
                             std::to_string(sizeof(WireUpCard)));
  }
  WireUpCard card;
  std::memcpy(&card, bytes.data(), sizeof card);
  if (card.magic != kWireUpCardMagic) throw std::runtime_error(who + " has a bad magic number");
  if (card.version != kWireUpCardVersion) {
    throw std::runtime_error(who + " has version " + std::to_string(card.version) + ", expected " +
                             std::to_string(kWireUpCardVersion) + " (mixed xmsg builds?)");
  }
  return card;
}

}  // namespace xmsg::verbs
