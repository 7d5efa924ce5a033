// Predefined datatypes: element sizes, validation, xmsg_get_count.
#include "xmsg_internal.h"

#include <cstdbool>

int xmsgi_check_type(xmsg_datatype_t datatype, const char* func, size_t* elem_size) {
  size_t s = xmsgi_type_size(datatype);
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
