// MPI-3.1 6.7: keyvals and attributes on communicators, datatypes and windows, with their
// copy and delete callbacks, and the predefined attributes of every communicator.
#include "mpi_impl.hpp"

namespace xmsg::mpi {
int last_used_error_code();

namespace {

struct Keyval {
  AttrKind kind;
  // One of the three callback pairs, by kind (the signatures differ only in the handle type,
  // which is an int for all three).
  MPI_Comm_copy_attr_function* copy = nullptr;
  MPI_Comm_delete_attr_function* del = nullptr;
  void* extra_state = nullptr;
  bool freed = false;
  int uses = 0;  // attributes set with it: a freed keyval lives until the last is deleted
};

constexpr int kFirstUserKeyval = 16;  // below: the predefined keys of mpi.h

std::map<int, Keyval>& keyvals() {
  static std::map<int, Keyval> table;
  return table;
}
int g_next_keyval = kFirstUserKeyval;

const char* kind_prefix(AttrKind kind) {
  switch (kind) {
    case AttrKind::kComm: return "Comm";
    case AttrKind::kType: return "Type";
    case AttrKind::kWin: return "Win";
  }
  return "";
}

Keyval* keyval_of(int keyval, AttrKind kind) {
  auto it = keyvals().find(keyval);
  if (it == keyvals().end() || it->second.kind != kind) return nullptr;
  return &it->second;
}

int create_keyval(AttrKind kind, MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del,
                  int* keyval, void* extra, const char* func) {
  if (!keyval) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "keyval is NULL");
  int k = g_next_keyval++;
  keyvals()[k] = Keyval{kind, copy, del, extra, false, 0};
  *keyval = k;
  return MPI_SUCCESS;
}

void release_use(int keyval) {
  auto it = keyvals().find(keyval);
  if (it == keyvals().end()) return;
  if (--it->second.uses <= 0 && it->second.freed) keyvals().erase(it);
}

int free_keyval(AttrKind kind, int* keyval, const char* func) {
  if (!keyval) return fail(MPI_ERR_ARG, func, MPI_COMM_WORLD, "keyval is NULL");
  Keyval* k = keyval_of(*keyval, kind);
  if (!k || k->freed)
    return fail(MPI_ERR_KEYVAL, func, MPI_COMM_WORLD, "keyval %d is not a %s keyval", *keyval, kind_prefix(kind));
  k->freed = true;
  if (k->uses == 0) keyvals().erase(*keyval);
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int delete_one(AttrKind kind, int object, AttrMap* attrs, int keyval, const char* func, MPI_Comm comm) {
  auto it = attrs->values.find(keyval);
  if (it == attrs->values.end())
    return fail(MPI_ERR_KEYVAL, func, comm, "keyval %d has no attribute on this object", keyval);
  Keyval* k = keyval_of(keyval, kind);
  if (k && k->del) {
    int e = k->del(object, keyval, it->second, k->extra_state);
    if (e != MPI_SUCCESS) return fail(e, func, comm, "the delete callback of keyval %d returned %d", keyval, e);
  }
  attrs->values.erase(it);
  release_use(keyval);
  return MPI_SUCCESS;
}

int set_one(AttrKind kind, int object, AttrMap* attrs, int keyval, void* value, const char* func, MPI_Comm comm) {
  Keyval* k = keyval_of(keyval, kind);
  if (!k || k->freed)
    return fail(MPI_ERR_KEYVAL, func, comm, "keyval %d is not a %s keyval", keyval, kind_prefix(kind));
  if (attrs->values.count(keyval)) {
    if (int e = delete_one(kind, object, attrs, keyval, func, comm)) return e;
    k = keyval_of(keyval, kind);
  }
  attrs->values[keyval] = value;
  ++k->uses;
  return MPI_SUCCESS;
}

// Values of the predefined communicator attributes (MPI_COMM_WORLD's; the same on every
// communicator here). The attribute value is a pointer to the int.
int g_tag_ub = XMSG_TAG_UB;
int g_host = MPI_PROC_NULL;
int g_io = MPI_ANY_SOURCE;
int g_wtime_is_global = 0;
int g_appnum = 0;
int g_universe_size = 0;
int g_lastusedcode = 0;

bool predefined_comm_attr(int keyval, void** value) {
  switch (keyval) {
    case MPI_TAG_UB: *value = &g_tag_ub; return true;
    case MPI_HOST: *value = &g_host; return true;
    case MPI_IO: *value = &g_io; return true;
    case MPI_WTIME_IS_GLOBAL: *value = &g_wtime_is_global; return true;
    case MPI_APPNUM: *value = &g_appnum; return true;
    case MPI_UNIVERSE_SIZE:
      xmsg_comm_size(MPI_COMM_WORLD, &g_universe_size);
      *value = &g_universe_size;
      return true;
    case MPI_LASTUSEDCODE:
      g_lastusedcode = last_used_error_code();
      *value = &g_lastusedcode;
      return true;
    default: return false;
  }
}

int check_comm(MPI_Comm comm, const char* func) {
  int size = 0;
  if (int e = xmsg_comm_size(comm, &size)) return handle(e, func, comm);
  return MPI_SUCCESS;
}

int check_type_handle(MPI_Datatype type, const char* func, Type** out) {
  Type* t = mutable_type_of(type);
  if (!t) return fail(MPI_ERR_TYPE, func, MPI_COMM_WORLD, "datatype %d is not a valid datatype", type);
  *out = t;
  return MPI_SUCCESS;
}

}  // namespace

int copy_attributes(AttrKind kind, int object, const AttrMap& from, AttrMap* to) {
  for (const auto& [keyval, value] : from.values) {
    Keyval* k = keyval_of(keyval, kind);
    if (!k || !k->copy) continue;  // MPI_*_NULL_COPY_FN: not copied
    void* out = nullptr;
    int flag = 0;
    int e = k->copy(object, keyval, k->extra_state, value, &out, &flag);
    if (e != MPI_SUCCESS) return e;
    if (flag) {
      to->values[keyval] = out;
      ++k->uses;
    }
  }
  return MPI_SUCCESS;
}

int delete_attributes(AttrKind kind, int object, AttrMap* attrs) {
  // Deleted in no particular order (MPI-3.1 allows any); callbacks may not set attributes.
  std::vector<int> keys;
  for (const auto& kv : attrs->values) keys.push_back(kv.first);
  int rc = MPI_SUCCESS;
  for (int keyval : keys) {
    Keyval* k = keyval_of(keyval, kind);
    void* value = attrs->values[keyval];
    if (k && k->del) {
      int e = k->del(object, keyval, value, k->extra_state);
      if (e != MPI_SUCCESS && rc == MPI_SUCCESS) rc = e;
    }
    attrs->values.erase(keyval);
    release_use(keyval);
  }
  return rc;
}

bool valid_keyval(AttrKind kind, int keyval) {
  const Keyval* k = keyval_of(keyval, kind);
  return k && !k->freed;
}

int set_attribute(AttrKind kind, int object, AttrMap* attrs, int keyval, void* value) {
  Keyval* k = keyval_of(keyval, kind);
  if (!k || k->freed) return MPI_ERR_KEYVAL;
  auto it = attrs->values.find(keyval);
  if (it != attrs->values.end()) {
    // The old value's delete callback runs before it is replaced (the use count stays).
    if (k->del)
      if (int e = k->del(object, keyval, it->second, k->extra_state)) return e;
    it->second = value;
    return MPI_SUCCESS;
  }
  attrs->values[keyval] = value;
  ++k->uses;
  return MPI_SUCCESS;
}

int delete_attribute(AttrKind kind, int object, AttrMap* attrs, int keyval) {
  auto it = attrs->values.find(keyval);
  if (it == attrs->values.end()) return MPI_ERR_KEYVAL;
  Keyval* k = keyval_of(keyval, kind);
  if (k && k->del)
    if (int e = k->del(object, keyval, it->second, k->extra_state)) return e;
  attrs->values.erase(it);
  release_use(keyval);
  return MPI_SUCCESS;
}

}  // namespace xmsg::mpi

using namespace xmsg::mpi;

extern "C" {

// The predefined callbacks.
int xmsg_mpi_comm_null_copy_fn(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int xmsg_mpi_comm_dup_fn(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int xmsg_mpi_comm_null_delete_fn(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }
int xmsg_mpi_type_null_copy_fn(MPI_Datatype, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int xmsg_mpi_type_dup_fn(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int xmsg_mpi_type_null_delete_fn(MPI_Datatype, int, void*, void*) { return MPI_SUCCESS; }
int xmsg_mpi_win_null_copy_fn(MPI_Win, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int xmsg_mpi_win_dup_fn(MPI_Win, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int xmsg_mpi_win_null_delete_fn(MPI_Win, int, void*, void*) { return MPI_SUCCESS; }

// ---- communicators ---------------------------------------------------------------------------
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy_fn, MPI_Comm_delete_attr_function* delete_fn,
                            int* comm_keyval, void* extra_state) {
  XMSG_MPI_ENTRY;
  return create_keyval(AttrKind::kComm, copy_fn, delete_fn, comm_keyval, extra_state, "MPI_Comm_create_keyval");
}
XMSG_MPI_ALIAS(Comm_create_keyval)

int PMPI_Comm_free_keyval(int* comm_keyval) {
  XMSG_MPI_ENTRY;
  return free_keyval(AttrKind::kComm, comm_keyval, "MPI_Comm_free_keyval");
}
XMSG_MPI_ALIAS(Comm_free_keyval)

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  XMSG_MPI_ENTRY;
  if (int e = check_comm(comm, "MPI_Comm_set_attr")) return e;
  if (comm_keyval > 0 && comm_keyval < kFirstUserKeyval)
    return fail(MPI_ERR_KEYVAL, "MPI_Comm_set_attr", comm, "keyval %d is predefined and cannot be set", comm_keyval);
  return set_one(AttrKind::kComm, comm, &state_of(comm)->attrs, comm_keyval, attribute_val, "MPI_Comm_set_attr",
                 comm);
}
XMSG_MPI_ALIAS(Comm_set_attr)

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  XMSG_MPI_ENTRY;
  if (int e = check_comm(comm, "MPI_Comm_get_attr")) return e;
  if (!attribute_val || !flag)
    return fail(MPI_ERR_ARG, "MPI_Comm_get_attr", comm, "%s is NULL", flag ? "attribute_val" : "flag");
  void* value = nullptr;
  if (predefined_comm_attr(comm_keyval, &value)) {
    *static_cast<void**>(attribute_val) = value;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (!keyval_of(comm_keyval, AttrKind::kComm))
    return fail(MPI_ERR_KEYVAL, "MPI_Comm_get_attr", comm, "keyval %d is not a communicator keyval", comm_keyval);
  auto& values = state_of(comm)->attrs.values;
  auto it = values.find(comm_keyval);
  *flag = it != values.end();
  if (*flag) *static_cast<void**>(attribute_val) = it->second;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Comm_get_attr)

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  XMSG_MPI_ENTRY;
  if (int e = check_comm(comm, "MPI_Comm_delete_attr")) return e;
  return delete_one(AttrKind::kComm, comm, &state_of(comm)->attrs, comm_keyval, "MPI_Comm_delete_attr", comm);
}
XMSG_MPI_ALIAS(Comm_delete_attr)

// MPI-1 names (deprecated, still used).
int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval, void* extra_state) {
  XMSG_MPI_ENTRY;
  return create_keyval(AttrKind::kComm, copy_fn, delete_fn, keyval, extra_state, "MPI_Keyval_create");
}
XMSG_MPI_ALIAS(Keyval_create)
int PMPI_Keyval_free(int* keyval) { XMSG_MPI_ENTRY; return free_keyval(AttrKind::kComm, keyval, "MPI_Keyval_free"); }
XMSG_MPI_ALIAS(Keyval_free)
int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  XMSG_MPI_ENTRY;
  return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}
XMSG_MPI_ALIAS(Attr_put)
int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  XMSG_MPI_ENTRY;
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
XMSG_MPI_ALIAS(Attr_get)
int PMPI_Attr_delete(MPI_Comm comm, int keyval) { XMSG_MPI_ENTRY; return PMPI_Comm_delete_attr(comm, keyval); }
XMSG_MPI_ALIAS(Attr_delete)

// ---- datatypes -------------------------------------------------------------------------------
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* copy_fn, MPI_Type_delete_attr_function* delete_fn,
                            int* type_keyval, void* extra_state) {
  XMSG_MPI_ENTRY;
  return create_keyval(AttrKind::kType, copy_fn, delete_fn, type_keyval, extra_state, "MPI_Type_create_keyval");
}
XMSG_MPI_ALIAS(Type_create_keyval)

int PMPI_Type_free_keyval(int* type_keyval) {
  XMSG_MPI_ENTRY;
  return free_keyval(AttrKind::kType, type_keyval, "MPI_Type_free_keyval");
}
XMSG_MPI_ALIAS(Type_free_keyval)

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  XMSG_MPI_ENTRY;
  Type* t = nullptr;
  if (int e = check_type_handle(datatype, "MPI_Type_set_attr", &t)) return e;
  return set_one(AttrKind::kType, datatype, &t->attrs, type_keyval, attribute_val, "MPI_Type_set_attr",
                 MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Type_set_attr)

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
  XMSG_MPI_ENTRY;
  Type* t = nullptr;
  if (int e = check_type_handle(datatype, "MPI_Type_get_attr", &t)) return e;
  if (!attribute_val || !flag)
    return fail(MPI_ERR_ARG, "MPI_Type_get_attr", MPI_COMM_WORLD, "%s is NULL", flag ? "attribute_val" : "flag");
  if (!keyval_of(type_keyval, AttrKind::kType))
    return fail(MPI_ERR_KEYVAL, "MPI_Type_get_attr", MPI_COMM_WORLD, "keyval %d is not a datatype keyval",
                type_keyval);
  auto it = t->attrs.values.find(type_keyval);
  *flag = it != t->attrs.values.end();
  if (*flag) *static_cast<void**>(attribute_val) = it->second;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  XMSG_MPI_ENTRY;
  Type* t = nullptr;
  if (int e = check_type_handle(datatype, "MPI_Type_delete_attr", &t)) return e;
  return delete_one(AttrKind::kType, datatype, &t->attrs, type_keyval, "MPI_Type_delete_attr", MPI_COMM_WORLD);
}
XMSG_MPI_ALIAS(Type_delete_attr)

// ---- windows: the keyvals (attributes on windows: rma/attributes.cpp) ----------------------------
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* copy_fn, MPI_Win_delete_attr_function* delete_fn,
                           int* win_keyval, void* extra_state) {
  XMSG_MPI_ENTRY;
  return create_keyval(AttrKind::kWin, copy_fn, delete_fn, win_keyval, extra_state, "MPI_Win_create_keyval");
}
XMSG_MPI_ALIAS(Win_create_keyval)

int PMPI_Win_free_keyval(int* win_keyval) { XMSG_MPI_ENTRY; return free_keyval(AttrKind::kWin, win_keyval, "MPI_Win_free_keyval"); }
XMSG_MPI_ALIAS(Win_free_keyval)

}  // extern "C"
