// Predefined datatypes: element sizes, validation, xmsg_get_count.
#include "xmsg_internal.h"

#include <cstdbool>

namespace {

template <class V>
struct Pair {
  V value;
  int index;
};

size_t size_of(int t) {
  switch (t) {
    case XMSG_BYTE: case XMSG_CHAR: case XMSG_SIGNED_CHAR: case XMSG_UNSIGNED_CHAR:
    case XMSG_INT8_T: case XMSG_UINT8_T: return 1;
    case XMSG_C_BOOL: return sizeof(bool);
    case XMSG_SHORT: case XMSG_UNSIGNED_SHORT: return sizeof(short);
    case XMSG_INT16_T: case XMSG_UINT16_T: return 2;
    case XMSG_INT: case XMSG_UNSIGNED: return sizeof(int);
    case XMSG_INT32_T: case XMSG_UINT32_T: return 4;
    case XMSG_LONG: case XMSG_UNSIGNED_LONG: return sizeof(long);
    case XMSG_LONG_LONG: case XMSG_UNSIGNED_LONG_LONG: return sizeof(long long);
    case XMSG_INT64_T: case XMSG_UINT64_T: return 8;
    case XMSG_FLOAT: return sizeof(float);
    case XMSG_DOUBLE: return sizeof(double);
    case XMSG_LONG_DOUBLE: return sizeof(long double);
    case XMSG_FLOAT_INT: return sizeof(Pair<float>);
    case XMSG_DOUBLE_INT: return sizeof(Pair<double>);
    case XMSG_LONG_INT: return sizeof(Pair<long>);
    case XMSG_2INT: return sizeof(Pair<int>);
    case XMSG_SHORT_INT: return sizeof(Pair<short>);
    case XMSG_LONG_DOUBLE_INT: return sizeof(Pair<long double>);
    default: return 0;
  }
}

}  // namespace

int xmsgi_check_type(xmsg_datatype_t datatype, const char* func, size_t* elem_size) {
  size_t s = size_of(datatype);
  if (s == 0) return xmsgi_error(XMSG_ERR_TYPE, "%s: datatype %d is not a predefined xmsg datatype", func, datatype);
  if (elem_size) *elem_size = s;
  return XMSG_SUCCESS;
}

extern "C" int xmsg_type_size(xmsg_datatype_t datatype, size_t* size) {
  if (!size) return xmsgi_error(XMSG_ERR_ARG, "xmsg_type_size: size is NULL");
  return xmsgi_check_type(datatype, "xmsg_type_size", size);
}

extern "C" int xmsg_get_count(const xmsg_status_t* status, xmsg_datatype_t datatype, int64_t* count) {
  if (!status) return xmsgi_error(XMSG_ERR_ARG, "xmsg_get_count: status is NULL");
  if (!count) return xmsgi_error(XMSG_ERR_ARG, "xmsg_get_count: count is NULL");
  size_t s = 0;
  if (int rc = xmsgi_check_type(datatype, "xmsg_get_count", &s)) return rc;
  *count = status->bytes % static_cast<int64_t>(s) == 0 ? status->bytes / static_cast<int64_t>(s) : XMSG_UNDEFINED;
  return XMSG_SUCCESS;
}
