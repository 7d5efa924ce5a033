// Reference data and reductions for the collective tests, written independently of the
// library: deterministic per-rank inputs, and the MPI op semantics element by element.
#pragma once

#include <xmsg/xmsg.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace colltest {

template <class V>
struct ValueInt {
  V value;
  int index;
};

enum class Group { Integer, Floating, Bool, Byte, Pair };

template <class T>
struct TypeInfo {
  using type = T;
  xmsg_datatype_t handle;
  const char* name;
  Group group;
};

// Calls f(TypeInfo<T>) for every predefined datatype.
template <class F>
void for_each_type(F&& f) {
  f(TypeInfo<unsigned char>{XMSG_BYTE, "BYTE", Group::Byte});
  // CHAR reduces as a C integer, as under MPICH and Open MPI (MPI's table leaves it out).
  f(TypeInfo<char>{XMSG_CHAR, "CHAR", Group::Integer});
  f(TypeInfo<signed char>{XMSG_SIGNED_CHAR, "SIGNED_CHAR", Group::Integer});
  f(TypeInfo<unsigned char>{XMSG_UNSIGNED_CHAR, "UNSIGNED_CHAR", Group::Integer});
  f(TypeInfo<short>{XMSG_SHORT, "SHORT", Group::Integer});
  f(TypeInfo<unsigned short>{XMSG_UNSIGNED_SHORT, "UNSIGNED_SHORT", Group::Integer});
  f(TypeInfo<int>{XMSG_INT, "INT", Group::Integer});
  f(TypeInfo<unsigned>{XMSG_UNSIGNED, "UNSIGNED", Group::Integer});
  f(TypeInfo<long>{XMSG_LONG, "LONG", Group::Integer});
  f(TypeInfo<unsigned long>{XMSG_UNSIGNED_LONG, "UNSIGNED_LONG", Group::Integer});
  f(TypeInfo<long long>{XMSG_LONG_LONG, "LONG_LONG", Group::Integer});
  f(TypeInfo<unsigned long long>{XMSG_UNSIGNED_LONG_LONG, "UNSIGNED_LONG_LONG", Group::Integer});
  f(TypeInfo<int8_t>{XMSG_INT8_T, "INT8_T", Group::Integer});
  f(TypeInfo<int16_t>{XMSG_INT16_T, "INT16_T", Group::Integer});
  f(TypeInfo<int32_t>{XMSG_INT32_T, "INT32_T", Group::Integer});
  f(TypeInfo<int64_t>{XMSG_INT64_T, "INT64_T", Group::Integer});
  f(TypeInfo<uint8_t>{XMSG_UINT8_T, "UINT8_T", Group::Integer});
  f(TypeInfo<uint16_t>{XMSG_UINT16_T, "UINT16_T", Group::Integer});
  f(TypeInfo<uint32_t>{XMSG_UINT32_T, "UINT32_T", Group::Integer});
  f(TypeInfo<uint64_t>{XMSG_UINT64_T, "UINT64_T", Group::Integer});
  f(TypeInfo<float>{XMSG_FLOAT, "FLOAT", Group::Floating});
  f(TypeInfo<double>{XMSG_DOUBLE, "DOUBLE", Group::Floating});
  f(TypeInfo<long double>{XMSG_LONG_DOUBLE, "LONG_DOUBLE", Group::Floating});
  f(TypeInfo<bool>{XMSG_C_BOOL, "C_BOOL", Group::Bool});
  f(TypeInfo<ValueInt<float>>{XMSG_FLOAT_INT, "FLOAT_INT", Group::Pair});
  f(TypeInfo<ValueInt<double>>{XMSG_DOUBLE_INT, "DOUBLE_INT", Group::Pair});
  f(TypeInfo<ValueInt<long>>{XMSG_LONG_INT, "LONG_INT", Group::Pair});
  f(TypeInfo<ValueInt<int>>{XMSG_2INT, "2INT", Group::Pair});
  f(TypeInfo<ValueInt<short>>{XMSG_SHORT_INT, "SHORT_INT", Group::Pair});
  f(TypeInfo<ValueInt<long double>>{XMSG_LONG_DOUBLE_INT, "LONG_DOUBLE_INT", Group::Pair});
}

inline const char* op_label(xmsg_op_t op) {
  static const char* const names[] = {"OP_NULL", "SUM", "PROD", "MIN", "MAX", "LAND", "LOR",
                                      "LXOR", "BAND", "BOR", "BXOR", "MINLOC", "MAXLOC", "REPLACE"};
  return op >= 0 && op < XMSG_OP_LAST ? names[op] : "user";
}

// MPI's table: which predefined op applies to which type group.
inline bool op_defined(xmsg_op_t op, Group g) {
  switch (op) {
    case XMSG_SUM: case XMSG_PROD: case XMSG_MIN: case XMSG_MAX:
      return g == Group::Integer || g == Group::Floating;
    case XMSG_LAND: case XMSG_LOR: case XMSG_LXOR:
      return g == Group::Integer || g == Group::Bool;
    case XMSG_BAND: case XMSG_BOR: case XMSG_BXOR:
      return g == Group::Integer || g == Group::Byte;
    case XMSG_MINLOC: case XMSG_MAXLOC:
      return g == Group::Pair;
    case XMSG_REPLACE:
      return true;
    default:
      return false;
  }
}

// Inputs chosen so every algorithm's order of evaluation gives the exact same bits: small
// integers (sums of 16 stay exact in float), and for PROD only 1, -1, 2, 1/2.
template <class T>
T input(int rank, int64_t i, int salt, xmsg_op_t op) {
  const int64_t h = (rank * 131 + i * 7 + salt * 17 + (i * i) % 11) % 1000003;
  if constexpr (std::is_same_v<T, bool>) {
    return h % 3 == 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (op == XMSG_PROD) {
      static const T choices[] = {T(1), T(-1), T(2), T(0.5)};
      return choices[h % 4];
    }
    return static_cast<T>(h % 17 - 8);
  } else if constexpr (std::is_integral_v<T>) {
    if (op == XMSG_PROD) return static_cast<T>(h % 3 + (std::is_signed_v<T> ? -1 : 1));
    if (op >= XMSG_LAND && op <= XMSG_LXOR) return static_cast<T>(h % 3 == 0 ? 0 : h % 5);
    if (op >= XMSG_BAND && op <= XMSG_BXOR) return static_cast<T>(h * 2654435761u);
    return std::is_signed_v<T> ? static_cast<T>(h % 17 - 8) : static_cast<T>(h % 17);
  } else {
    using V = decltype(T::value);
    // Few distinct values so ties (and the lower-index rule) happen.
    return T{static_cast<V>(h % 5), static_cast<int>((rank * 7 + i) % 13)};
  }
}

template <class T>
T wrap_arith(T a, T b, bool multiply) {
  const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
  return static_cast<T>(multiply ? x * y : x + y);
}

// a (op) b, a from the lower ranks.
template <class T>
T apply(xmsg_op_t op, const T& a, const T& b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case XMSG_LAND: return a && b;
      case XMSG_LOR: return a || b;
      case XMSG_LXOR: return a != b;
      default: return b;
    }
  } else if constexpr (std::is_arithmetic_v<T>) {
    switch (op) {
      case XMSG_SUM:
        if constexpr (std::is_integral_v<T>) return wrap_arith(a, b, false);
        else return a + b;
      case XMSG_PROD:
        if constexpr (std::is_integral_v<T>) return wrap_arith(a, b, true);
        else return a * b;
      case XMSG_MIN: return b < a ? b : a;
      case XMSG_MAX: return a < b ? b : a;
      case XMSG_LAND: return static_cast<T>(a != 0 && b != 0);
      case XMSG_LOR: return static_cast<T>(a != 0 || b != 0);
      case XMSG_LXOR: return static_cast<T>((a != 0) != (b != 0));
      default: break;
    }
    if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case XMSG_BAND: return static_cast<T>(a & b);
        case XMSG_BOR: return static_cast<T>(a | b);
        case XMSG_BXOR: return static_cast<T>(a ^ b);
        default: break;
      }
    }
    return b;
  } else {
    if (op == XMSG_MINLOC || op == XMSG_MAXLOC) {
      const bool a_wins = op == XMSG_MINLOC ? a.value < b.value : b.value < a.value;
      const bool b_wins = op == XMSG_MINLOC ? b.value < a.value : a.value < b.value;
      if (a_wins) return a;
      if (b_wins) return b;
      return T{a.value, a.index < b.index ? a.index : b.index};
    }
    return b;
  }
}

template <class T>
bool same(const T& a, const T& b) {
  if constexpr (std::is_arithmetic_v<T>) return a == b;
  else return a.value == b.value && a.index == b.index;
}

// Byte pattern for the data-movement collectives: block of `rank` towards `peer`.
inline unsigned char pattern(int rank, int peer, int64_t i, int salt) {
  return static_cast<unsigned char>((rank * 37 + peer * 101 + i * 13 + salt * 7 + (i >> 8)) & 0xff);
}

}  // namespace colltest
