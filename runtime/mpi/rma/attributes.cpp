// A window's names, info, attributes and error handlers, and the routing of every RMA error
// through the window's handler (raise / reraise / dispatch): the properties a program sets on
// and reads from a window, and where misuse of it is reported.
#include "rma.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace xmsg::mpi::rma {
namespace {

// ---- errors through the window's handler -----------------------------------------------------
[[noreturn]] void fatal(int code, const char* message) {
  std::fprintf(stderr, "%s (MPI_ERRORS_ARE_FATAL: aborting the job)\n", message);
  std::fflush(stderr);
  xmsg_abort(MPI_COMM_WORLD, code ? code : 1, message);
  std::_Exit(code ? code : 1);
}

}  // namespace

int dispatch(Window* w, int code, const char* message) {
  MPI_Errhandler eh = w->errhandler;
  if (eh == MPI_ERRORS_RETURN) return code;
  // A handler made with MPI_Win_create_errhandler (env.cpp's table): its function gets the
  // window and the code; once it returns, the failing call returns the code.
  if (call_win_errhandler(eh, static_cast<MPI_Win>(w->handle), code)) return code;
  fatal(code, message);
}

int raise(Window* w, int code, const char* func, const char* fmt, ...) {
  char what[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(what, sizeof what, fmt, args);
  va_end(args);
  char message[768];
  std::snprintf(message, sizeof message, "%s: %s", func, what);
  xmsgi_error(code, "%s", message);
  return dispatch(w, code, message);
}

// A failure some helper already recorded (check_type, the C API): route it to the window.
int reraise(Window* w, int code, const char* func) {
  if (code == MPI_SUCCESS) return code;
  const char* detail = xmsg_last_error_message();
  char message[768];
  if (detail && *detail && std::strncmp(detail, "MPI_", 4) == 0) std::snprintf(message, sizeof message, "%s", detail);
  else std::snprintf(message, sizeof message, "%s: %s", func, detail && *detail ? detail : xmsg_error_string(code));
  return dispatch(w, code, message);
}

}  // namespace xmsg::mpi::rma

using namespace xmsg::mpi;
using namespace xmsg::mpi::rma;

extern "C" {

// ---- names, info, attributes, error handlers ---------------------------------------------------
int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_set_name";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!win_name) return raise(w, MPI_ERR_ARG, func, "win_name is NULL");
  w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_get_name";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!win_name || !resultlen) return raise(w, MPI_ERR_ARG, func, "win_name or resultlen is NULL");
  std::memcpy(win_name, w->name.c_str(), w->name.size() + 1);
  *resultlen = static_cast<int>(w->name.size());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_get_name)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_set_info";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  store_info(w, info);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_get_info";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!info_used) return raise(w, MPI_ERR_ARG, func, "info_used is NULL");
  if (int e = PMPI_Info_create(info_used)) return reraise(w, e, func);
  std::map<std::string, std::string> all = {{"no_locks", "false"},
                                            {"accumulate_ordering", "rar,raw,war,waw"},
                                            {"accumulate_ops", "same_op_no_op"},
                                            {"same_size", "false"},
                                            {"same_disp_unit", "false"}};
  if (w->flavor == MPI_WIN_FLAVOR_SHARED) all["alloc_shared_noncontig"] = "false";
  // Which path the operations take (docs/rma.md): the origin alone, or the target's service.
  all["xmsg_rma_path"] = w->direct ? "direct" : w->cma ? "single_copy" : w->remote ? "remote" : "messages";
  if (w->remote) {
    // The transports puts and gets take to the other ranks ("messages" for ranks none reaches).
    std::string via;
    for (int r = 0; r < w->size; ++r) {
      if (r == w->rank) continue;
      const char* t = w->remote_via[static_cast<size_t>(r)] ? w->remote_via[static_cast<size_t>(r)] : "messages";
      if (("," + via + ",").find("," + std::string(t) + ",") == std::string::npos) via += (via.empty() ? "" : ",") + std::string(t);
    }
    all["xmsg_rma_remote"] = via;
  }
  // Who applies accumulate-class operations on 64-bit integers: the device's atomics, or the
  // target (its service, or the origin under the window's lock on the direct paths).
  all["xmsg_rma_atomics"] = w->device_atomics ? "device" : "target";
  // Who keeps the passive-target locks: the device's atomics on each rank's lock word, the
  // origins' CPU atomics in the shared control block (direct and single-copy paths), or the
  // target's service.
  all["xmsg_rma_locks"] = w->device_locks ? "device" : w->lock_words ? "segment" : "target";
  for (auto& [k, v] : w->info) all[k] = v;
  for (auto& [k, v] : all) PMPI_Info_set(*info_used, k.c_str(), v.c_str());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_get_info)

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_set_attr";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (win_keyval >= MPI_WIN_BASE && win_keyval <= MPI_WIN_MODEL)
    return raise(w, MPI_ERR_KEYVAL, func, "keyval %d is predefined and cannot be set", win_keyval);
  if (!valid_keyval(AttrKind::kWin, win_keyval))
    return raise(w, MPI_ERR_KEYVAL, func,
                 "keyval %d is not a window keyval (made by MPI_Win_create_keyval and not freed)", win_keyval);
  // An old value's delete callback runs as MPI requires before it is replaced.
  if (int e = set_attribute(AttrKind::kWin, win, &w->attrs, win_keyval, attribute_val))
    return raise(w, e, func, "the delete callback of keyval %d returned %d", win_keyval, e);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_set_attr)

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_get_attr";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!attribute_val || !flag) return raise(w, MPI_ERR_ARG, func, "attribute_val or flag is NULL");
  void** out = static_cast<void**>(attribute_val);
  *flag = 1;
  switch (win_keyval) {
    case MPI_WIN_BASE: *out = w->base; return MPI_SUCCESS;
    case MPI_WIN_SIZE: w->attr_size = w->win_size; *out = &w->attr_size; return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT: w->attr_disp_unit = w->disp_unit; *out = &w->attr_disp_unit; return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR: w->attr_flavor = w->flavor; *out = &w->attr_flavor; return MPI_SUCCESS;
    case MPI_WIN_MODEL: w->attr_model = w->model; *out = &w->attr_model; return MPI_SUCCESS;
    default: break;
  }
  auto it = w->attrs.values.find(win_keyval);
  *flag = it != w->attrs.values.end();
  if (*flag) *out = it->second;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_get_attr)

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_delete_attr";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  auto it = w->attrs.values.find(win_keyval);
  if (it == w->attrs.values.end())
    return raise(w, MPI_ERR_KEYVAL, func, "keyval %d has no attribute on window %s", win_keyval, win_name(w));
  if (int e = delete_attribute(AttrKind::kWin, win, &w->attrs, win_keyval))
    return raise(w, e, func, "the delete callback of keyval %d returned %d", win_keyval, e);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_delete_attr)

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_set_errhandler";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (errhandler == MPI_ERRHANDLER_NULL)
    return raise(w, MPI_ERR_ARG, func, "errhandler is MPI_ERRHANDLER_NULL");
  if (!is_win_errhandler(errhandler))
    return raise(w, MPI_ERR_ARG, func,
                 "errhandler %d is not MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN or a live window handler "
                 "(MPI_Win_create_errhandler)", errhandler);
  w->errhandler = errhandler;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_get_errhandler";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  if (!errhandler) return raise(w, MPI_ERR_ARG, func, "errhandler is NULL");
  *errhandler = w->errhandler;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Win_call_errhandler";
  Window* w = nullptr;
  if (int e = check_win(win, func, &w)) return e;
  char message[128];
  std::snprintf(message, sizeof message, "%s: error code %d raised by the program", func, errorcode);
  dispatch(w, errorcode, message);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_call_errhandler)

}  // extern "C"
