// A memcpy for the collectives' large copies that keeps its speed when source and destination
// lie differently within a cache line (plain_copy.cpp says why memcpy does not).
#pragma once

#include <cstddef>

namespace xmsg::coll {

void plain_copy(void* dst, const void* src, size_t bytes);

}  // namespace xmsg::coll
