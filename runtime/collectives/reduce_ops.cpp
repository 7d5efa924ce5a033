// The built-in reduction ops over the predefined datatypes, following MPI's table of which op
// applies to which type group:
//   sum, prod, min, max      C integers and floating point
//   land, lor, lxor          C integers and C_BOOL
//   band, bor, bxor          C integers and BYTE
//   minloc, maxloc           the (value, int) pair types
//   sum, prod                the complex types (complex multiplication; MPI defines no order
//                            on them, so min and max are refused)
//   replace                  every type (a op b = b: the higher rank's value wins)
// MPI's table leaves CHAR (a printable character) out of the C integers, but MPICH and Open MPI
// both reduce it as one (MPICH's "C integer extra" group: every op a C integer takes), and
// codes rely on that (OSU's reduce benchmarks default to MPI_CHAR): CHAR is a C integer here
// too, computed as C's char (signed or unsigned as the platform's char is), wrapping like the
// other integers.
#include <complex>
#include <cstdint>
#include <type_traits>

#include "coll.hpp"
#include "xmsg_internal.h"

namespace xmsg::coll {
namespace {

template <class T>
using ValueInt = XmsgiValueIndex<T>;  // the runtime's pair layout, so element sizes agree by construction

enum class Group { Integer, Floating, Bool, Byte, Pair, Invalid };

// Signed overflow is undefined; integer sum/prod wrap like the hardware does by computing in
// an unsigned type at least as wide as unsigned int (narrower ones would promote to int).
template <class T>
using Wrap = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T, class F>
void each(const void* in, void* inout, int64_t n, F f) {
  const T* __restrict a = static_cast<const T*>(in);
  T* __restrict b = static_cast<T*>(inout);
  for (int64_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
}

template <class T>
struct Ops {
  static void sum(const void* in, void* inout, int64_t n) {
    if constexpr (std::is_integral_v<T>)
      each<T>(in, inout, n, [](T a, T b) { return static_cast<T>(static_cast<Wrap<T>>(a) + static_cast<Wrap<T>>(b)); });
    else
      each<T>(in, inout, n, [](T a, T b) { return a + b; });
  }
  static void prod(const void* in, void* inout, int64_t n) {
    if constexpr (std::is_integral_v<T>)
      each<T>(in, inout, n, [](T a, T b) { return static_cast<T>(static_cast<Wrap<T>>(a) * static_cast<Wrap<T>>(b)); });
    else
      each<T>(in, inout, n, [](T a, T b) { return a * b; });
  }
  static void min(const void* in, void* inout, int64_t n) {
    each<T>(in, inout, n, [](T a, T b) { return b < a ? b : a; });
  }
  static void max(const void* in, void* inout, int64_t n) {
    each<T>(in, inout, n, [](T a, T b) { return a < b ? b : a; });
  }
  static void land(const void* in, void* inout, int64_t n) {
    each<T>(in, inout, n, [](T a, T b) { return static_cast<T>(a != T(0) && b != T(0)); });
  }
  static void lor(const void* in, void* inout, int64_t n) {
    each<T>(in, inout, n, [](T a, T b) { return static_cast<T>(a != T(0) || b != T(0)); });
  }
  static void lxor(const void* in, void* inout, int64_t n) {
    each<T>(in, inout, n, [](T a, T b) { return static_cast<T>((a != T(0)) != (b != T(0))); });
  }
  static void band(const void* in, void* inout, int64_t n) {
    each<T>(in, inout, n, [](T a, T b) { return static_cast<T>(a & b); });
  }
  static void bor(const void* in, void* inout, int64_t n) {
    each<T>(in, inout, n, [](T a, T b) { return static_cast<T>(a | b); });
  }
  static void bxor(const void* in, void* inout, int64_t n) {
    each<T>(in, inout, n, [](T a, T b) { return static_cast<T>(a ^ b); });
  }
};

template <class V>
struct PairOps {
  using P = ValueInt<V>;
  static void minloc(const void* in, void* inout, int64_t n) {
    each<P>(in, inout, n, [](const P& a, const P& b) {
      if (a.value < b.value) return a;
      if (b.value < a.value) return b;
      return P{a.value, a.index < b.index ? a.index : b.index};
    });
  }
  static void maxloc(const void* in, void* inout, int64_t n) {
    each<P>(in, inout, n, [](const P& a, const P& b) {
      if (b.value < a.value) return a;
      if (a.value < b.value) return b;
      return P{a.value, a.index < b.index ? a.index : b.index};
    });
  }
};

void keep_inout(const void*, void*, int64_t) {}

template <class T>
ReduceOp::Builtin for_scalar(xmsg_op_t op, Group g) {
  const bool integer = g == Group::Integer, floating = g == Group::Floating;
  const bool boolean = g == Group::Bool, byte = g == Group::Byte;
  if constexpr (!std::is_same_v<T, bool>) {
    switch (op) {
      case XMSG_SUM: return integer || floating ? &Ops<T>::sum : nullptr;
      case XMSG_PROD: return integer || floating ? &Ops<T>::prod : nullptr;
      case XMSG_MIN: return integer || floating ? &Ops<T>::min : nullptr;
      case XMSG_MAX: return integer || floating ? &Ops<T>::max : nullptr;
      default: break;
    }
  }
  switch (op) {
    case XMSG_LAND: return integer || boolean ? &Ops<T>::land : nullptr;
    case XMSG_LOR: return integer || boolean ? &Ops<T>::lor : nullptr;
    case XMSG_LXOR: return integer || boolean ? &Ops<T>::lxor : nullptr;
    case XMSG_REPLACE: return &keep_inout;
    default: break;
  }
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    switch (op) {
      case XMSG_BAND: return integer || byte ? &Ops<T>::band : nullptr;
      case XMSG_BOR: return integer || byte ? &Ops<T>::bor : nullptr;
      case XMSG_BXOR: return integer || byte ? &Ops<T>::bxor : nullptr;
      default: break;
    }
  }
  return nullptr;
}

// std::complex<T> has the layout of C's T _Complex (the standard guarantees the array view).
template <class T>
ReduceOp::Builtin for_complex(xmsg_op_t op) {
  using C = std::complex<T>;
  switch (op) {
    case XMSG_SUM: return [](const void* in, void* inout, int64_t n) { each<C>(in, inout, n, [](C a, C b) { return a + b; }); };
    case XMSG_PROD: return [](const void* in, void* inout, int64_t n) { each<C>(in, inout, n, [](C a, C b) { return a * b; }); };
    case XMSG_REPLACE: return &keep_inout;
    default: return nullptr;
  }
}

template <class V>
ReduceOp::Builtin for_pair(xmsg_op_t op) {
  switch (op) {
    case XMSG_MINLOC: return &PairOps<V>::minloc;
    case XMSG_MAXLOC: return &PairOps<V>::maxloc;
    case XMSG_REPLACE: return &keep_inout;
    default: return nullptr;
  }
}

}  // namespace

ReduceOp::Builtin builtin_op(xmsg_op_t op, xmsg_datatype_t type) {
  if (op <= XMSG_OP_NULL || op >= XMSG_OP_LAST) return nullptr;
  switch (type) {
    case XMSG_BYTE: return for_scalar<unsigned char>(op, Group::Byte);
    case XMSG_CHAR: return for_scalar<char>(op, Group::Integer);
    case XMSG_SIGNED_CHAR: return for_scalar<signed char>(op, Group::Integer);
    case XMSG_UNSIGNED_CHAR: return for_scalar<unsigned char>(op, Group::Integer);
    case XMSG_SHORT: return for_scalar<short>(op, Group::Integer);
    case XMSG_UNSIGNED_SHORT: return for_scalar<unsigned short>(op, Group::Integer);
    case XMSG_INT: return for_scalar<int>(op, Group::Integer);
    case XMSG_UNSIGNED: return for_scalar<unsigned>(op, Group::Integer);
    case XMSG_LONG: return for_scalar<long>(op, Group::Integer);
    case XMSG_UNSIGNED_LONG: return for_scalar<unsigned long>(op, Group::Integer);
    case XMSG_LONG_LONG: return for_scalar<long long>(op, Group::Integer);
    case XMSG_UNSIGNED_LONG_LONG: return for_scalar<unsigned long long>(op, Group::Integer);
    case XMSG_INT8_T: return for_scalar<int8_t>(op, Group::Integer);
    case XMSG_INT16_T: return for_scalar<int16_t>(op, Group::Integer);
    case XMSG_INT32_T: return for_scalar<int32_t>(op, Group::Integer);
    case XMSG_INT64_T: return for_scalar<int64_t>(op, Group::Integer);
    case XMSG_UINT8_T: return for_scalar<uint8_t>(op, Group::Integer);
    case XMSG_UINT16_T: return for_scalar<uint16_t>(op, Group::Integer);
    case XMSG_UINT32_T: return for_scalar<uint32_t>(op, Group::Integer);
    case XMSG_UINT64_T: return for_scalar<uint64_t>(op, Group::Integer);
    case XMSG_FLOAT: return for_scalar<float>(op, Group::Floating);
    case XMSG_DOUBLE: return for_scalar<double>(op, Group::Floating);
    case XMSG_LONG_DOUBLE: return for_scalar<long double>(op, Group::Floating);
    case XMSG_C_BOOL: return for_scalar<bool>(op, Group::Bool);
    case XMSG_FLOAT_INT: return for_pair<float>(op);
    case XMSG_DOUBLE_INT: return for_pair<double>(op);
    case XMSG_LONG_INT: return for_pair<long>(op);
    case XMSG_2INT: return for_pair<int>(op);
    case XMSG_SHORT_INT: return for_pair<short>(op);
    case XMSG_LONG_DOUBLE_INT: return for_pair<long double>(op);
    case XMSG_FLOAT_COMPLEX: return for_complex<float>(op);
    case XMSG_DOUBLE_COMPLEX: return for_complex<double>(op);
    case XMSG_LONG_DOUBLE_COMPLEX: return for_complex<long double>(op);
    default: return nullptr;
  }
}

bool builtin_commutative(xmsg_op_t op) { return op != XMSG_REPLACE; }

const char* op_name(xmsg_op_t op) {
  static const char* const names[] = {"XMSG_OP_NULL", "XMSG_SUM", "XMSG_PROD", "XMSG_MIN", "XMSG_MAX",
                                      "XMSG_LAND", "XMSG_LOR", "XMSG_LXOR", "XMSG_BAND", "XMSG_BOR",
                                      "XMSG_BXOR", "XMSG_MINLOC", "XMSG_MAXLOC", "XMSG_REPLACE"};
  static_assert(sizeof(names) / sizeof(names[0]) == XMSG_OP_LAST);
  if (op >= 0 && op < XMSG_OP_LAST) return names[op];
  return "user op";
}

const char* type_name(xmsg_datatype_t type) {
  static const char* const names[] = {
      "(invalid)", "XMSG_BYTE", "XMSG_CHAR", "XMSG_SIGNED_CHAR", "XMSG_UNSIGNED_CHAR", "XMSG_SHORT",
      "XMSG_UNSIGNED_SHORT", "XMSG_INT", "XMSG_UNSIGNED", "XMSG_LONG", "XMSG_UNSIGNED_LONG",
      "XMSG_LONG_LONG", "XMSG_UNSIGNED_LONG_LONG", "XMSG_INT8_T", "XMSG_INT16_T", "XMSG_INT32_T",
      "XMSG_INT64_T", "XMSG_UINT8_T", "XMSG_UINT16_T", "XMSG_UINT32_T", "XMSG_UINT64_T", "XMSG_FLOAT",
      "XMSG_DOUBLE", "XMSG_LONG_DOUBLE", "XMSG_C_BOOL", "XMSG_FLOAT_INT", "XMSG_DOUBLE_INT",
      "XMSG_LONG_INT", "XMSG_2INT", "XMSG_SHORT_INT", "XMSG_LONG_DOUBLE_INT", "XMSG_FLOAT_COMPLEX",
      "XMSG_DOUBLE_COMPLEX", "XMSG_LONG_DOUBLE_COMPLEX"};
  static_assert(sizeof(names) / sizeof(names[0]) == XMSG_DATATYPE_LAST);
  if (type > 0 && type < XMSG_DATATYPE_LAST) return names[type];
  return "(invalid datatype)";
}

}  // namespace xmsg::coll
