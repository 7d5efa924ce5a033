// Byte counts as people read them (1024-based units), for the tools' text output.
#pragma once

#include <fmt/format.h>

#include <string>

namespace xmsg::tools {

inline std::string human_bytes(double bytes, int decimals) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.{}f} {}", bytes, decimals, units[unit]);
}

}  // namespace xmsg::tools
