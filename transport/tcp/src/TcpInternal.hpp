// What more than one of the tcp transport's files uses (TcpTransport.cpp, TcpConnect.cpp,
// TcpFrames.cpp, TcpRendezvous.cpp); what only one uses stays in that file.
#pragma once

#include <cstring>
#include <string>

namespace xmsg::transport::tcp::detail {

inline constexpr const char* kAddressKey = "xmsg.tcp.addr";

inline std::string errno_text(int err) { return std::strerror(err); }

}  // namespace xmsg::transport::tcp::detail
