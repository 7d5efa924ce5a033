// MPI-3.1 chapter 8: initialisation and thread level, the library's identity, timers, memory,
// error codes, classes and handlers; and the Fortran handle conversions (handles are ints).
#include "mpi_impl.hpp"

#include <pthread.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace xmsg::mpi {
namespace {

pthread_t g_main_thread;
bool g_main_thread_set = false;
int g_thread_level = MPI_THREAD_SINGLE;  // what MPI_Init(_thread) provided

// Error handlers: 1 and 2 are the predefined ones; created handlers get handles from 3.
struct Errhandler {
  MPI_Comm_errhandler_function* comm_fn = nullptr;
  MPI_Win_errhandler_function* win_fn = nullptr;
  bool freed = false;
};
std::vector<Errhandler>& errhandlers() {
  static std::vector<Errhandler> table(3);
  return table;
}

// User-defined error classes and codes (MPI_Add_error_class/_code/_string).
struct UserError {
  int error_class;
  std::string text;
};
std::map<int, UserError>& user_errors() {
  static std::map<int, UserError> table;
  return table;
}
int g_last_used_code = MPI_ERR_LASTCODE;

// xmsg messages start with the xmsg function ("xmsg_send: dest 7 ..."); MPI users called an
// MPI function, so name that one instead.
const char* detail_without_function(const char* message) {
  if (std::strncmp(message, "xmsg_", 5) == 0) {
    const char* colon = std::strstr(message, ": ");
    if (colon) return colon + 2;
  }
  return message;
}

const char* class_text(int code) {
  switch (code) {
    case MPI_ERR_IN_STATUS: return "error code in status";
    case MPI_ERR_UNKNOWN: return "unknown error";
    case MPI_ERR_GROUP: return "invalid group";
    case MPI_ERR_TOPOLOGY: return "invalid topology";
    case MPI_ERR_DIMS: return "invalid dimension argument";
    case MPI_ERR_KEYVAL: return "invalid keyval";
    case MPI_ERR_INFO: return "invalid info object";
    case MPI_ERR_INFO_KEY: return "info key too long";
    case MPI_ERR_INFO_VALUE: return "info value too long";
    case MPI_ERR_INFO_NOKEY: return "info key not defined";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "operation not supported by xmsg";
    case MPI_ERR_NOT_SAME: return "collective arguments not the same on every rank";
    case MPI_ERR_WIN: return "invalid window";
    case MPI_ERR_BASE: return "invalid base address";
    case MPI_ERR_SIZE: return "invalid size";
    case MPI_ERR_DISP: return "invalid displacement";
    case MPI_ERR_LOCKTYPE: return "invalid lock type";
    case MPI_ERR_ASSERT: return "invalid assert";
    case MPI_ERR_RMA_CONFLICT: return "conflicting RMA accesses";
    case MPI_ERR_RMA_SYNC: return "wrong RMA synchronisation";
    case MPI_ERR_RMA_RANGE: return "RMA target out of the window";
    case MPI_ERR_RMA_ATTACH: return "memory cannot be attached";
    case MPI_ERR_RMA_SHARED: return "memory cannot be shared";
    case MPI_ERR_RMA_FLAVOR: return "wrong window flavor";
    case MPI_ERR_SPAWN: return "cannot spawn processes";
    case MPI_ERR_PORT: return "invalid port";
    case MPI_ERR_SERVICE: return "invalid service";
    case MPI_ERR_NAME: return "invalid name";
    case MPI_ERR_FILE: return "invalid file";
    case MPI_ERR_AMODE: return "invalid access mode";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "unsupported data representation";
    case MPI_ERR_NO_SUCH_FILE: return "no such file";
    case MPI_ERR_FILE_EXISTS: return "file exists";
    case MPI_ERR_BAD_FILE: return "bad file name";
    case MPI_ERR_ACCESS: return "permission denied";
    case MPI_ERR_NO_SPACE: return "no space left";
    case MPI_ERR_QUOTA: return "quota exceeded";
    case MPI_ERR_READ_ONLY: return "read-only file";
    case MPI_ERR_FILE_IN_USE: return "file in use";
    case MPI_ERR_DUP_DATAREP: return "data representation already defined";
    case MPI_ERR_CONVERSION: return "conversion failed";
    case MPI_ERR_IO: return "I/O error";
    default: return nullptr;
  }
}

[[noreturn]] void abort_job(MPI_Comm comm, int code, const char* message) {
  std::fprintf(stderr, "%s (MPI_ERRORS_ARE_FATAL: aborting the job)\n", message);
  std::fflush(stderr);
  int initialized = 0, finalized = 0;
  xmsg_initialized(&initialized);
  xmsg_finalized(&finalized);
  if (!initialized || finalized) std::_Exit(code ? code : 1);
  xmsg_abort(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code ? code : 1, message);
  std::_Exit(code ? code : 1);
}

// Runs the handler of `comm` for `code`; `message` is what a fatal handler prints.
int invoke(int code, MPI_Comm comm, const char* message) {
  // An error on a handle that is not a communicator goes to MPI_COMM_WORLD's handler.
  int size = 0;
  if (comm != MPI_COMM_WORLD && xmsg_comm_size(comm, &size) != MPI_SUCCESS) comm = MPI_COMM_WORLD;
  MPI_Errhandler eh = errhandler_of(comm);
  if (eh == MPI_ERRORS_RETURN) return code;
  auto& table = errhandlers();
  if (eh > MPI_ERRORS_RETURN && eh < static_cast<int>(table.size()) && table[eh].comm_fn) {
    MPI_Comm c = comm;
    int e = code;
    table[eh].comm_fn(&c, &e);
    return code;
  }
  abort_job(comm, code, message);
}

}  // namespace

MPI_Errhandler errhandler_of(MPI_Comm comm) {
  CommState* s = comm == MPI_COMM_NULL ? state_of(MPI_COMM_WORLD) : state_of(comm);
  return s ? s->errhandler : MPI_ERRORS_ARE_FATAL;
}

bool is_win_errhandler(MPI_Errhandler errhandler) {
  if (errhandler == MPI_ERRORS_ARE_FATAL || errhandler == MPI_ERRORS_RETURN) return true;
  auto& table = errhandlers();
  return errhandler > MPI_ERRORS_RETURN && errhandler < static_cast<int>(table.size()) &&
         !table[errhandler].freed && table[errhandler].win_fn;
}

// A handler freed while set on a window still runs for it (MPI frees it once unused), as for
// communicators in invoke().
bool call_win_errhandler(MPI_Errhandler errhandler, MPI_Win win, int code) {
  auto& table = errhandlers();
  if (errhandler <= MPI_ERRORS_RETURN || errhandler >= static_cast<int>(table.size()) || !table[errhandler].win_fn)
    return false;
  MPI_Win w = win;
  int e = code;
  table[errhandler].win_fn(&w, &e);
  return true;
}

int handle_failure(int code, const char* func, MPI_Comm comm) {
  const char* detail = xmsg_last_error_message();
  char message[768];
  if (detail && *detail)
    std::snprintf(message, sizeof message, "%s: %s", func, detail_without_function(detail));
  else
    std::snprintf(message, sizeof message, "%s: %s", func, xmsg_error_string(code));
  return invoke(code, comm, message);
}

int fail(int code, const char* func, MPI_Comm comm, const char* fmt, ...) {
  char what[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(what, sizeof what, fmt, args);
  va_end(args);
  char message[768];
  std::snprintf(message, sizeof message, "%s: %s", func, what);
  xmsgi_error(code, "%s", message);
  return invoke(code, comm, message);
}

int error_class_of(int code) {
  if (code >= 0 && code < MPI_ERR_LASTCODE) return code;
  auto it = user_errors().find(code);
  return it == user_errors().end() ? MPI_ERR_UNKNOWN : it->second.error_class;
}

int last_used_error_code() { return g_last_used_code; }

}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

// ---- initialisation ------------------------------------------------------------------------
int PMPI_Init(int* argc, char*** argv) {
  XMSG_MPI_ENTRY;
  g_main_thread = pthread_self();
  g_main_thread_set = true;
  g_thread_level = MPI_THREAD_SINGLE;
  return handle(xmsg_init(argc, argv), "MPI_Init");
}
XMSG_MPI_ALIAS(Init)

// Every level is provided. The runtime is single-threaded underneath: SERIALIZED needs nothing
// more (no state belongs to a thread), MULTIPLE serialises the calls with the layer's one lock
// (begin_thread_multiple; XMSG_THREAD_MULTIPLE=off answers SERIALIZED instead, as MPI allows).
int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  XMSG_MPI_ENTRY;
  if (!provided) return fail(MPI_ERR_ARG, "MPI_Init_thread", MPI_COMM_WORLD, "provided is NULL");
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
    return fail(MPI_ERR_ARG, "MPI_Init_thread", MPI_COMM_WORLD,
                "required %d is not a thread level (MPI_THREAD_SINGLE .. MPI_THREAD_MULTIPLE)", required);
  g_main_thread = pthread_self();
  g_main_thread_set = true;
  int code = xmsg_init(argc, argv);
  if (code == MPI_SUCCESS) {
    g_thread_level = required;
    if (required == MPI_THREAD_MULTIPLE && !xmsgi_thread_multiple_allowed()) g_thread_level = MPI_THREAD_SERIALIZED;
    // Before returning: no other thread may call in until this call has.
    if (g_thread_level == MPI_THREAD_MULTIPLE) begin_thread_multiple();
    *provided = g_thread_level;
  }
  return handle(code, "MPI_Init_thread");
}
XMSG_MPI_ALIAS(Init_thread)

int PMPI_Query_thread(int* provided) {
  if (!provided) return fail(MPI_ERR_ARG, "MPI_Query_thread", MPI_COMM_WORLD, "provided is NULL");
  *provided = g_thread_level;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Query_thread)

int PMPI_Is_thread_main(int* flag) {
  if (!flag) return fail(MPI_ERR_ARG, "MPI_Is_thread_main", MPI_COMM_WORLD, "flag is NULL");
  *flag = g_main_thread_set && pthread_equal(g_main_thread, pthread_self());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Is_thread_main)

int PMPI_Initialized(int* flag) { return handle(xmsg_initialized(flag), "MPI_Initialized"); }
XMSG_MPI_ALIAS(Initialized)

int PMPI_Finalize(void) {
  XMSG_MPI_ENTRY;
  // The helper goes first: what is left is finished by this thread alone.
  stop_progress_thread();
  // MPI-3.1 8.7: MPI_COMM_SELF's attributes are deleted first, as if it were freed.
  if (CommState* self = state_of(MPI_COMM_SELF)) delete_attributes(AttrKind::kComm, MPI_COMM_SELF, &self->attrs);
  while (progress_pending()) progress_all();
  release_schedule_scratch();
  return handle(xmsg_finalize(), "MPI_Finalize");
}
XMSG_MPI_ALIAS(Finalize)

int PMPI_Finalized(int* flag) { return handle(xmsg_finalized(flag), "MPI_Finalized"); }
XMSG_MPI_ALIAS(Finalized)

int PMPI_Abort(MPI_Comm comm, int errorcode) {
  XMSG_MPI_ENTRY;
  char message[64];
  std::snprintf(message, sizeof message, "MPI_Abort called with error code %d", errorcode);
  return xmsg_abort(comm, errorcode, message);
}
XMSG_MPI_ALIAS(Abort)

double PMPI_Wtime(void) { return xmsg_wtime(); }
XMSG_MPI_ALIAS(Wtime)

double PMPI_Wtick(void) {
  timespec resolution{};
  if (clock_getres(CLOCK_MONOTONIC, &resolution) != 0) return 1e-9;
  return static_cast<double>(resolution.tv_sec) + static_cast<double>(resolution.tv_nsec) * 1e-9;
}
XMSG_MPI_ALIAS(Wtick)

int PMPI_Get_processor_name(char* name, int* resultlen) {
  XMSG_MPI_ENTRY;
  if (!name || !resultlen)
    return fail(MPI_ERR_ARG, "MPI_Get_processor_name", MPI_COMM_WORLD, "%s is NULL", name ? "resultlen" : "name");
  // The node's name from the bootstrap, so ranks of different (virtual) nodes tell their nodes
  // apart as the launcher placed them; the host name before MPI_Init.
  const char* node = xmsgi_hostname();
  if (node && *node) std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", node);
  else if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0) std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
  name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  *resultlen = static_cast<int>(std::strlen(name));
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Get_processor_name)

int PMPI_Get_version(int* version, int* subversion) {
  XMSG_MPI_ENTRY;
  if (!version || !subversion)
    return fail(MPI_ERR_ARG, "MPI_Get_version", MPI_COMM_WORLD, "%s is NULL", version ? "subversion" : "version");
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Get_version)

int PMPI_Get_library_version(char* version, int* resultlen) {
  XMSG_MPI_ENTRY;
  if (!version || !resultlen)
    return fail(MPI_ERR_ARG, "MPI_Get_library_version", MPI_COMM_WORLD, "%s is NULL",
                version ? "resultlen" : "version");
  std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                "xmsg MPI %d.%d (shared memory, verbs RC/XRC, tcp; no one-sided, I/O or dynamic processes)",
                MPI_VERSION, MPI_SUBVERSION);
  *resultlen = static_cast<int>(std::strlen(version));
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Get_library_version)

// Ordinary memory, page-aligned so large buffers start on a page as the transports prefer
// (shm's single-copy path and verbs registration both work per page).
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  XMSG_MPI_ENTRY;
  (void)info;
  if (size < 0) return fail(MPI_ERR_SIZE, "MPI_Alloc_mem", MPI_COMM_WORLD, "size %ld is negative", (long)size);
  if (!baseptr) return fail(MPI_ERR_ARG, "MPI_Alloc_mem", MPI_COMM_WORLD, "baseptr is NULL");
  void* p = nullptr;
  if (posix_memalign(&p, 4096, size > 0 ? static_cast<size_t>(size) : 1) != 0)
    return fail(MPI_ERR_NO_MEM, "MPI_Alloc_mem", MPI_COMM_WORLD, "cannot allocate %ld bytes", (long)size);
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Alloc_mem)

int PMPI_Free_mem(void* base) {
  XMSG_MPI_ENTRY;
  std::free(base);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Free_mem)

int PMPI_Pcontrol(const int level, ...) {
  XMSG_MPI_ENTRY;
  (void)level;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Pcontrol)


// ---- error codes and classes ---------------------------------------------------------------
int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  XMSG_MPI_ENTRY;
  if (!string || !resultlen)
    return fail(MPI_ERR_ARG, "MPI_Error_string", MPI_COMM_WORLD, "%s is NULL", string ? "resultlen" : "string");
  const char* text = nullptr;
  auto it = user_errors().find(errorcode);
  if (it != user_errors().end()) text = it->second.text.c_str();
  else if (errorcode >= 0 && errorcode < XMSG_ERR_LAST) text = xmsg_error_string(errorcode);
  else text = class_text(errorcode);
  if (!text) return fail(MPI_ERR_ARG, "MPI_Error_string", MPI_COMM_WORLD, "errorcode %d is not an error code", errorcode);
  std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", text);
  *resultlen = static_cast<int>(std::strlen(string));
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Error_string)

int PMPI_Error_class(int errorcode, int* errorclass) {
  XMSG_MPI_ENTRY;
  if (!errorclass) return fail(MPI_ERR_ARG, "MPI_Error_class", MPI_COMM_WORLD, "errorclass is NULL");
  if ((errorcode < 0 || errorcode >= MPI_ERR_LASTCODE) && !user_errors().count(errorcode))
    return fail(MPI_ERR_ARG, "MPI_Error_class", MPI_COMM_WORLD, "errorcode %d is not an error code", errorcode);
  *errorclass = error_class_of(errorcode);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Error_class)

int PMPI_Add_error_class(int* errorclass) {
  XMSG_MPI_ENTRY;
  if (!errorclass) return fail(MPI_ERR_ARG, "MPI_Add_error_class", MPI_COMM_WORLD, "errorclass is NULL");
  int code = ++g_last_used_code;
  user_errors()[code] = UserError{code, ""};
  *errorclass = code;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Add_error_class)

int PMPI_Add_error_code(int errorclass, int* errorcode) {
  XMSG_MPI_ENTRY;
  if (!errorcode) return fail(MPI_ERR_ARG, "MPI_Add_error_code", MPI_COMM_WORLD, "errorcode is NULL");
  auto it = user_errors().find(errorclass);
  bool is_class = (errorclass >= 0 && errorclass < MPI_ERR_LASTCODE) ||
                  (it != user_errors().end() && it->second.error_class == errorclass);
  if (!is_class)
    return fail(MPI_ERR_ARG, "MPI_Add_error_code", MPI_COMM_WORLD, "errorclass %d is not an error class", errorclass);
  int code = ++g_last_used_code;
  user_errors()[code] = UserError{errorclass, ""};
  *errorcode = code;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Add_error_code)

int PMPI_Add_error_string(int errorcode, const char* string) {
  XMSG_MPI_ENTRY;
  if (!string) return fail(MPI_ERR_ARG, "MPI_Add_error_string", MPI_COMM_WORLD, "string is NULL");
  auto it = user_errors().find(errorcode);
  if (it == user_errors().end())
    return fail(MPI_ERR_ARG, "MPI_Add_error_string", MPI_COMM_WORLD,
                "errorcode %d was not added with MPI_Add_error_class/_code", errorcode);
  if (std::strlen(string) >= MPI_MAX_ERROR_STRING)
    return fail(MPI_ERR_ARG, "MPI_Add_error_string", MPI_COMM_WORLD, "string is longer than MPI_MAX_ERROR_STRING");
  it->second.text = string;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Add_error_string)

// ---- error handlers ------------------------------------------------------------------------
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler) {
  XMSG_MPI_ENTRY;
  if (!function) return fail(MPI_ERR_ARG, "MPI_Comm_create_errhandler", MPI_COMM_WORLD, "function is NULL");
  if (!errhandler) return fail(MPI_ERR_ARG, "MPI_Comm_create_errhandler", MPI_COMM_WORLD, "errhandler is NULL");
  errhandlers().push_back(Errhandler{function, nullptr, false});
  *errhandler = static_cast<int>(errhandlers().size() - 1);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_create_errhandler)

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* function, MPI_Errhandler* errhandler) {
  XMSG_MPI_ENTRY;
  if (!function) return fail(MPI_ERR_ARG, "MPI_Win_create_errhandler", MPI_COMM_WORLD, "function is NULL");
  if (!errhandler) return fail(MPI_ERR_ARG, "MPI_Win_create_errhandler", MPI_COMM_WORLD, "errhandler is NULL");
  errhandlers().push_back(Errhandler{nullptr, function, false});
  *errhandler = static_cast<int>(errhandlers().size() - 1);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Win_create_errhandler)

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  XMSG_MPI_ENTRY;
  int size = 0;
  if (int e = xmsg_comm_size(comm, &size)) return handle(e, "MPI_Comm_set_errhandler");
  auto& table = errhandlers();
  bool valid = errhandler == MPI_ERRORS_ARE_FATAL || errhandler == MPI_ERRORS_RETURN ||
               (errhandler > MPI_ERRORS_RETURN && errhandler < static_cast<int>(table.size()) &&
                !table[errhandler].freed && table[errhandler].comm_fn);
  if (!valid)
    return fail(MPI_ERR_ARG, "MPI_Comm_set_errhandler", comm,
                "errhandler %d is not MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN or a live communicator handler",
                errhandler);
  state_of(comm)->errhandler = errhandler;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_set_errhandler)

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  XMSG_MPI_ENTRY;
  if (!errhandler) return fail(MPI_ERR_ARG, "MPI_Comm_get_errhandler", comm, "errhandler is NULL");
  int size = 0;
  if (int e = xmsg_comm_size(comm, &size)) return handle(e, "MPI_Comm_get_errhandler");
  *errhandler = errhandler_of(comm);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_get_errhandler)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  XMSG_MPI_ENTRY;
  int size = 0;
  if (int e = xmsg_comm_size(comm, &size)) return handle(e, "MPI_Comm_call_errhandler");
  char message[128];
  std::snprintf(message, sizeof message, "MPI_Comm_call_errhandler: error code %d raised by the program", errorcode);
  invoke(errorcode, comm, message);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_call_errhandler)

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  XMSG_MPI_ENTRY;
  if (!errhandler) return fail(MPI_ERR_ARG, "MPI_Errhandler_free", MPI_COMM_WORLD, "errhandler is NULL");
  auto& table = errhandlers();
  // Predefined handlers may be "freed" (the handle becomes null, the handler stays).
  if (*errhandler > MPI_ERRORS_RETURN && *errhandler < static_cast<int>(table.size()))
    table[*errhandler].freed = true;
  else if (*errhandler != MPI_ERRORS_ARE_FATAL && *errhandler != MPI_ERRORS_RETURN)
    return fail(MPI_ERR_ARG, "MPI_Errhandler_free", MPI_COMM_WORLD, "errhandler %d is not an error handler",
                *errhandler);
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Errhandler_free)

// ---- Fortran handle conversion: every handle but requests is an int --------------------------
MPI_Fint PMPI_Comm_c2f(MPI_Comm comm) { XMSG_MPI_ENTRY; return comm; }
XMSG_MPI_ALIAS(Comm_c2f)
MPI_Comm PMPI_Comm_f2c(MPI_Fint comm) { XMSG_MPI_ENTRY; return comm; }
XMSG_MPI_ALIAS(Comm_f2c)
MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype) { XMSG_MPI_ENTRY; return datatype; }
XMSG_MPI_ALIAS(Type_c2f)
MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype) { XMSG_MPI_ENTRY; return datatype; }
XMSG_MPI_ALIAS(Type_f2c)
MPI_Fint PMPI_Group_c2f(MPI_Group group) { XMSG_MPI_ENTRY; return group; }
XMSG_MPI_ALIAS(Group_c2f)
MPI_Group PMPI_Group_f2c(MPI_Fint group) { XMSG_MPI_ENTRY; return group; }
XMSG_MPI_ALIAS(Group_f2c)
MPI_Fint PMPI_Op_c2f(MPI_Op op) { XMSG_MPI_ENTRY; return op; }
XMSG_MPI_ALIAS(Op_c2f)
MPI_Op PMPI_Op_f2c(MPI_Fint op) { XMSG_MPI_ENTRY; return op; }
XMSG_MPI_ALIAS(Op_f2c)
MPI_Fint PMPI_Info_c2f(MPI_Info info) { XMSG_MPI_ENTRY; return info; }
XMSG_MPI_ALIAS(Info_c2f)
MPI_Info PMPI_Info_f2c(MPI_Fint info) { XMSG_MPI_ENTRY; return info; }
XMSG_MPI_ALIAS(Info_f2c)
MPI_Fint PMPI_Win_c2f(MPI_Win win) { XMSG_MPI_ENTRY; return win; }
XMSG_MPI_ALIAS(Win_c2f)
MPI_Win PMPI_Win_f2c(MPI_Fint win) { XMSG_MPI_ENTRY; return win; }
XMSG_MPI_ALIAS(Win_f2c)
MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler) { XMSG_MPI_ENTRY; return errhandler; }
XMSG_MPI_ALIAS(Errhandler_c2f)
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler) { XMSG_MPI_ENTRY; return errhandler; }
XMSG_MPI_ALIAS(Errhandler_f2c)

}  // extern "C"
