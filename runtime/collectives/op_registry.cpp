// User-defined reduction ops (xmsg_op_create / xmsg_op_free) and the resolution of any op
// handle for a datatype. User handles start at XMSG_OP_LAST; freed slots are reused.
#include <vector>

#include "coll.hpp"

namespace xmsg::coll {
namespace {

struct UserOp {
  xmsg_user_function* function = nullptr;
  void* user_data = nullptr;
  bool commutative = true;
};

std::vector<UserOp>& user_ops() {
  static std::vector<UserOp> ops;
  return ops;
}

const UserOp* find_user_op(xmsg_op_t op) {
  auto& ops = user_ops();
  const long index = static_cast<long>(op) - XMSG_OP_LAST;
  if (index < 0 || index >= static_cast<long>(ops.size()) || !ops[index].function) return nullptr;
  return &ops[index];
}

}  // namespace

int resolve_op(xmsg_op_t op, xmsg_datatype_t type, size_t elem_size, const char* func, ReduceOp* out) {
  ReduceOp r;
  r.type = type;
  r.elem_size = elem_size;
  if (op == XMSG_OP_NULL) return fail(XMSG_ERR_OP, "%s: op is XMSG_OP_NULL", func);
  if (op > XMSG_OP_NULL && op < XMSG_OP_LAST) {
    r.builtin = builtin_op(op, type);
    if (!r.builtin)
      return fail(XMSG_ERR_OP, "%s: op %s is not defined for datatype %s", func, op_name(op), type_name(type));
    r.commutative = builtin_commutative(op);
  } else {
    const UserOp* user = find_user_op(op);
    if (!user) return fail(XMSG_ERR_OP, "%s: op %d is not a valid op (never created or already freed)", func, op);
    r.user = user->function;
    r.user_data = user->user_data;
    r.commutative = user->commutative;
  }
  *out = r;
  return XMSG_SUCCESS;
}

}  // namespace xmsg::coll

using namespace xmsg::coll;

extern "C" int xmsg_op_create(xmsg_user_function* function, int commute, void* user_data, xmsg_op_t* op) {
  if (!function) return fail(XMSG_ERR_ARG, "xmsg_op_create: function is NULL");
  if (!op) return fail(XMSG_ERR_ARG, "xmsg_op_create: op is NULL");
  auto& ops = user_ops();
  size_t slot = 0;
  while (slot < ops.size() && ops[slot].function) ++slot;
  if (slot == ops.size()) ops.emplace_back();
  ops[slot] = UserOp{function, user_data, commute != 0};
  *op = static_cast<xmsg_op_t>(XMSG_OP_LAST + slot);
  return XMSG_SUCCESS;
}

extern "C" int xmsg_op_free(xmsg_op_t* op) {
  if (!op) return fail(XMSG_ERR_ARG, "xmsg_op_free: op is NULL");
  if (*op >= XMSG_OP_NULL && *op < XMSG_OP_LAST)
    return fail(XMSG_ERR_OP, "xmsg_op_free: op %s is predefined and cannot be freed", op_name(*op));
  if (!find_user_op(*op))
    return fail(XMSG_ERR_OP, "xmsg_op_free: op %d is not a valid op (never created or already freed)", *op);
  user_ops()[*op - XMSG_OP_LAST] = UserOp{};
  *op = XMSG_OP_NULL;
  return XMSG_SUCCESS;
}

extern "C" int xmsg_op_commutative(xmsg_op_t op, int* commute) {
  if (!commute) return fail(XMSG_ERR_ARG, "xmsg_op_commutative: commute is NULL");
  if (op > XMSG_OP_NULL && op < XMSG_OP_LAST) {
    *commute = builtin_commutative(op) ? 1 : 0;
    return XMSG_SUCCESS;
  }
  const UserOp* user = find_user_op(op);
  if (!user) return fail(XMSG_ERR_OP, "xmsg_op_commutative: op %d is not a valid op (never created or already freed)", op);
  *commute = user->commutative ? 1 : 0;
  return XMSG_SUCCESS;
}

extern "C" int xmsg_reduce_local(const void* in, void* inout, int64_t count, xmsg_datatype_t datatype, xmsg_op_t op) {
  const char* f = "xmsg_reduce_local";
  if (count < 0) return fail(XMSG_ERR_COUNT, "%s: count %lld is negative", f, static_cast<long long>(count));
  size_t es = 0;
  if (int e = check_type(datatype, f, "datatype", &es)) return e;
  ReduceOp rop;
  if (int e = resolve_op(op, datatype, es, f, &rop)) return e;
  if (count > 0 && (!in || !inout)) return fail(XMSG_ERR_BUFFER, "%s: %s is NULL", f, in ? "inout" : "in");
  rop.apply(in, inout, count);
  return XMSG_SUCCESS;
}
