// Datatypes (MPI-3.1 chapter 4): the table of predefined and derived types, the type
// constructors, their bounds (lb/ub markers as MPICH and Open MPI track them), the flattened
// type map (blocks) pack/unpack run on, external32, the envelope/contents decoding, and the
// (buffer, count, datatype) views sends, receives and collectives hand to the C API.
//
// Every type is an Entry (a Type with what only this file needs). A derived type is computed
// completely when it is constructed: its blocks (the data of one element in type-map order,
// adjacent blocks merged), its element runs (the basic element kind of each piece of data, for
// external32 and MPI_Get_elements; only kept when the data mixes kinds) and whether the blocks
// repeat at a fixed stride (pack/unpack then run without reading the block list). A type keeps
// the types it was built from alive (MPI_Type_get_contents returns them even after the
// program freed them).
#include "mpi_impl.hpp"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <climits>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace xmsg::mpi {
namespace {

// ---- basic element kinds ------------------------------------------------------------------
// What external32 converts and MPI_Get_elements counts: one predefined (non-pair) element.
enum Elem : uint8_t {
  kNone = 0,  // no data
  kE1,        // 1-byte types: copied as they are
  kI2,
  kI4,
  kI8,
  kF4,
  kF8,
  kLong,   // C long: 4 bytes in external32
  kULong,  // unsigned long: 4 bytes in external32
  kWchar,  // wchar_t: 2 bytes in external32
  kLD,     // long double: 16 bytes (IEEE binary128) in external32
  kCF,     // float complex: two 4-byte halves
  kCD,     // double complex
  kCLD,    // long double complex
  kElemCount,
  kMixed = 255  // the data mixes kinds: see Entry::runs
};

struct ElemInfo {
  int native;  // bytes in memory
  int ext;     // bytes in external32
};

constexpr ElemInfo kElemInfo[kElemCount] = {
    {1, 1},                                            // kNone (unused)
    {1, 1},                                            // kE1
    {2, 2},                                            // kI2
    {4, 4},                                            // kI4
    {8, 8},                                            // kI8
    {4, 4},                                            // kF4
    {8, 8},                                            // kF8
    {static_cast<int>(sizeof(long)), 4},               // kLong
    {static_cast<int>(sizeof(unsigned long)), 4},      // kULong
    {static_cast<int>(sizeof(wchar_t)), 2},            // kWchar
    {static_cast<int>(sizeof(long double)), 16},       // kLD
    {8, 8},                                            // kCF
    {16, 16},                                          // kCD
    {static_cast<int>(2 * sizeof(long double)), 32},   // kCLD
};

inline int native_of(uint8_t e) { return kElemInfo[e].native; }
inline int ext_of(uint8_t e) { return kElemInfo[e].ext; }

struct Run {
  MPI_Aint offset;  // from the start of one element
  int64_t count;    // elements of kind `elem`, contiguous
  uint8_t elem;
};

// ---- the table ------------------------------------------------------------------------------
struct Entry : Type {
  int handle = MPI_DATATYPE_NULL;
  int64_t align = 1;               // alignment of the most-aligned basic element
  bool lb_marker = false;          // lb / ub set explicitly (resized, subarray, darray)
  bool ub_marker = false;
  uint8_t uniform = kNone;         // the kind of all the data, kMixed when mixed
  std::vector<Run> runs;           // kMixed only: the data as runs of one kind, type-map order
  int64_t nelems = 0;              // basic elements per element (MPI_Get_elements)
  int64_t ext_size = 0;            // bytes of one element in external32
  // Blocks at a fixed stride: reg_n blocks of reg_len bytes, the first at reg_first, the next
  // reg_stride further (reg_n 0 when irregular or empty).
  int64_t reg_n = 0;
  int64_t reg_len = 0;
  MPI_Aint reg_first = 0;
  MPI_Aint reg_stride = 0;
  // The types of the contents (kept alive while this type is).
  std::vector<std::shared_ptr<const Entry>> refs;
  ~Entry();
};

// Addresses of the entries of the table (predefined and derived, freed ones included while a
// view keeps them): pack/unpack may be handed a plain Type copied out of one (a schedule keeps
// such copies), which has the public fields only. Never destroyed (entries may outlive static
// destruction order).
std::unordered_set<const Type*>& registry() {
  static auto* set = new std::unordered_set<const Type*>;
  return *set;
}
Entry::~Entry() { registry().erase(this); }

// The entry behind `t`, nullptr when `t` is a copy.
inline const Entry* entry_behind(const Type& t) {
  const auto& r = registry();
  return r.find(&t) != r.end() ? static_cast<const Entry*>(&t) : nullptr;
}

constexpr int kFirstDerived = 64;

struct Table {
  std::vector<std::shared_ptr<Entry>> entries;
  // Freed while messages in flight still use them (TypePin); each goes with its last pin.
  std::vector<std::shared_ptr<Entry>> parked;
  Table();
};

Table& table() {
  static Table t;
  return t;
}

const Entry* entry_of(MPI_Datatype d) {
  auto& v = table().entries;
  if (d <= 0 || static_cast<size_t>(d) >= v.size()) return nullptr;
  return v[static_cast<size_t>(d)].get();
}

std::shared_ptr<Entry> shared_entry_of(MPI_Datatype d) {
  auto& v = table().entries;
  if (d <= 0 || static_cast<size_t>(d) >= v.size()) return nullptr;
  return v[static_cast<size_t>(d)];
}


// Pointer arithmetic that is defined for MPI_BOTTOM (a null base) and negative offsets.
inline uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }
inline uintptr_t add(uintptr_t p, MPI_Aint off) { return p + static_cast<uintptr_t>(off); }
inline const void* cptr(uintptr_t p) { return reinterpret_cast<const void*>(p); }
inline void* mptr(uintptr_t p) { return reinterpret_cast<void*>(p); }

// Contiguous, fixed-stride and block layout of a finished entry; the basic type checked
// against the data size (a derived type of padded pair types has no one xmsg type whose
// elements are its packed data).
void finalize(Entry* e, bool check_basic = true) {
  const auto& b = e->blocks;
  e->contiguous = b.size() == 1 && b[0].offset == e->true_lb && b[0].bytes == e->size && e->extent == e->size;
  e->reg_n = 0;
  if (b.size() == 1) {
    e->reg_n = 1;
    e->reg_len = b[0].bytes;
    e->reg_first = b[0].offset;
    e->reg_stride = 0;
  } else if (b.size() >= 2) {
    MPI_Aint stride = b[1].offset - b[0].offset;
    bool regular = true;
    for (size_t i = 1; i < b.size() && regular; ++i)
      regular = b[i].bytes == b[0].bytes && b[i].offset - b[i - 1].offset == stride;
    if (regular) {
      e->reg_n = static_cast<int64_t>(b.size());
      e->reg_len = b[0].bytes;
      e->reg_first = b[0].offset;
      e->reg_stride = stride;
    }
  }
  if (check_basic && e->basic != 0 &&
      e->basic_count * static_cast<int64_t>(xmsgi_type_size(e->basic)) != e->size) {
    e->basic = 0;
    e->basic_count = 0;
  }
}

// A predefined type whose data is `count` elements of one kind, contiguous.
std::shared_ptr<Entry> make_named(int handle, const char* name, uint8_t elem, int64_t count, xmsg_datatype_t basic,
                                  int64_t basic_count, int64_t align) {
  auto e = std::make_shared<Entry>();
  e->handle = handle;
  e->predefined = true;
  e->committed = true;
  e->name = name;
  e->size = native_of(elem) * count;
  e->lb = 0;
  e->extent = e->size;
  e->true_lb = 0;
  e->true_extent = e->size;
  e->blocks = {Block{0, e->size}};
  e->basic = basic;
  e->basic_count = basic_count;
  e->combiner = MPI_COMBINER_NAMED;
  e->align = align;
  e->uniform = elem;
  e->nelems = count;
  e->ext_size = ext_of(elem) * count;
  finalize(e.get(), false);
  return e;
}

// A (value, int) pair type with the layout of XmsgiValueIndex<V> (padding after the index
// when the struct has any).
template <class V>
std::shared_ptr<Entry> make_pair_type(int handle, const char* name, uint8_t value_elem) {
  using P = XmsgiValueIndex<V>;
  auto e = std::make_shared<Entry>();
  e->handle = handle;
  e->predefined = true;
  e->committed = true;
  e->name = name;
  const int64_t vsize = sizeof(V);
  const MPI_Aint ioff = offsetof(P, index);
  e->size = vsize + static_cast<int64_t>(sizeof(int));
  e->lb = 0;
  e->extent = sizeof(P);
  e->true_lb = 0;
  e->true_extent = ioff + static_cast<MPI_Aint>(sizeof(int));
  if (ioff == vsize) e->blocks = {Block{0, e->size}};
  else e->blocks = {Block{0, vsize}, Block{ioff, static_cast<int64_t>(sizeof(int))}};
  e->basic = handle;
  e->basic_count = 1;
  e->combiner = MPI_COMBINER_NAMED;
  e->align = alignof(P);
  if (value_elem == kI4) {
    e->uniform = kI4;
  } else {
    e->uniform = kMixed;
    e->runs = {Run{0, 1, value_elem}, Run{ioff, 1, kI4}};
  }
  e->nelems = 2;
  e->ext_size = ext_of(value_elem) + 4;
  finalize(e.get(), false);
  return e;
}

template <class T>
constexpr uint8_t int_elem() {
  return sizeof(T) == 1 ? kE1 : sizeof(T) == 2 ? kI2 : sizeof(T) == 4 ? kI4 : kI8;
}

Table::Table() {
  entries.resize(kFirstDerived);
  auto put = [this](std::shared_ptr<Entry> e) {
    registry().insert(e.get());
    entries[static_cast<size_t>(e->handle)] = std::move(e);
  };
  put(make_named(MPI_BYTE, "MPI_BYTE", kE1, 1, XMSG_BYTE, 1, 1));
  put(make_named(MPI_CHAR, "MPI_CHAR", kE1, 1, XMSG_CHAR, 1, 1));
  put(make_named(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", kE1, 1, XMSG_SIGNED_CHAR, 1, 1));
  put(make_named(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", kE1, 1, XMSG_UNSIGNED_CHAR, 1, 1));
  put(make_named(MPI_SHORT, "MPI_SHORT", int_elem<short>(), 1, XMSG_SHORT, 1, alignof(short)));
  put(make_named(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", int_elem<unsigned short>(), 1, XMSG_UNSIGNED_SHORT, 1,
                 alignof(unsigned short)));
  put(make_named(MPI_INT, "MPI_INT", int_elem<int>(), 1, XMSG_INT, 1, alignof(int)));
  put(make_named(MPI_UNSIGNED, "MPI_UNSIGNED", int_elem<unsigned>(), 1, XMSG_UNSIGNED, 1, alignof(unsigned)));
  put(make_named(MPI_LONG, "MPI_LONG", kLong, 1, XMSG_LONG, 1, alignof(long)));
  put(make_named(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", kULong, 1, XMSG_UNSIGNED_LONG, 1, alignof(unsigned long)));
  put(make_named(MPI_LONG_LONG, "MPI_LONG_LONG_INT", int_elem<long long>(), 1, XMSG_LONG_LONG, 1,
                 alignof(long long)));
  put(make_named(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", int_elem<unsigned long long>(), 1,
                 XMSG_UNSIGNED_LONG_LONG, 1, alignof(unsigned long long)));
  put(make_named(MPI_INT8_T, "MPI_INT8_T", kE1, 1, XMSG_INT8_T, 1, 1));
  put(make_named(MPI_INT16_T, "MPI_INT16_T", kI2, 1, XMSG_INT16_T, 1, alignof(int16_t)));
  put(make_named(MPI_INT32_T, "MPI_INT32_T", kI4, 1, XMSG_INT32_T, 1, alignof(int32_t)));
  put(make_named(MPI_INT64_T, "MPI_INT64_T", kI8, 1, XMSG_INT64_T, 1, alignof(int64_t)));
  put(make_named(MPI_UINT8_T, "MPI_UINT8_T", kE1, 1, XMSG_UINT8_T, 1, 1));
  put(make_named(MPI_UINT16_T, "MPI_UINT16_T", kI2, 1, XMSG_UINT16_T, 1, alignof(uint16_t)));
  put(make_named(MPI_UINT32_T, "MPI_UINT32_T", kI4, 1, XMSG_UINT32_T, 1, alignof(uint32_t)));
  put(make_named(MPI_UINT64_T, "MPI_UINT64_T", kI8, 1, XMSG_UINT64_T, 1, alignof(uint64_t)));
  put(make_named(MPI_FLOAT, "MPI_FLOAT", kF4, 1, XMSG_FLOAT, 1, alignof(float)));
  put(make_named(MPI_DOUBLE, "MPI_DOUBLE", kF8, 1, XMSG_DOUBLE, 1, alignof(double)));
  put(make_named(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", kLD, 1, XMSG_LONG_DOUBLE, 1, alignof(long double)));
  put(make_named(MPI_C_BOOL, "MPI_C_BOOL", int_elem<bool>(), 1, XMSG_C_BOOL, 1, alignof(bool)));
  put(make_pair_type<float>(MPI_FLOAT_INT, "MPI_FLOAT_INT", kF4));
  put(make_pair_type<double>(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", kF8));
  put(make_pair_type<long>(MPI_LONG_INT, "MPI_LONG_INT", kLong));
  put(make_pair_type<int>(MPI_2INT, "MPI_2INT", kI4));
  put(make_pair_type<short>(MPI_SHORT_INT, "MPI_SHORT_INT", kI2));
  put(make_pair_type<long double>(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", kLD));
  // This library's predefined types, each over an xmsg basic type.
  static_assert(sizeof(wchar_t) == 4, "MPI_WCHAR maps to XMSG_INT32_T");
  put(make_named(MPI_PACKED, "MPI_PACKED", kE1, 1, XMSG_BYTE, 1, 1));
  put(make_named(MPI_WCHAR, "MPI_WCHAR", kWchar, 1, XMSG_INT32_T, 1, alignof(wchar_t)));
  put(make_named(MPI_AINT, "MPI_AINT", kI8, 1, XMSG_INT64_T, 1, alignof(MPI_Aint)));
  put(make_named(MPI_OFFSET, "MPI_OFFSET", kI8, 1, XMSG_INT64_T, 1, alignof(MPI_Offset)));
  put(make_named(MPI_COUNT, "MPI_COUNT", kI8, 1, XMSG_INT64_T, 1, alignof(MPI_Count)));
  put(make_named(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", kCF, 1, XMSG_FLOAT_COMPLEX, 1, alignof(float)));
  put(make_named(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", kCD, 1, XMSG_DOUBLE_COMPLEX, 1, alignof(double)));
  put(make_named(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", kCLD, 1, XMSG_LONG_DOUBLE_COMPLEX, 1,
                 alignof(long double)));
  put(make_named(MPI_CXX_BOOL, "MPI_CXX_BOOL", int_elem<bool>(), 1, XMSG_C_BOOL, 1, alignof(bool)));
  put(make_named(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", kCF, 1, XMSG_FLOAT_COMPLEX, 1, alignof(float)));
  put(make_named(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", kCD, 1, XMSG_DOUBLE_COMPLEX, 1, alignof(double)));
  put(make_named(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", kCLD, 1, XMSG_LONG_DOUBLE_COMPLEX, 1,
                 alignof(long double)));
}

int add_entry(std::shared_ptr<Entry> e) {
  auto& v = table().entries;
  if (v.size() >= static_cast<size_t>(INT_MAX)) return MPI_DATATYPE_NULL;
  e->handle = static_cast<int>(v.size());
  e->predefined = false;
  registry().insert(e.get());
  v.push_back(std::move(e));
  return v.back()->handle;
}

// The handle goes; the type stays while messages in flight use it (TypePin), parked.
void drop_handle(MPI_Datatype h) {
  std::shared_ptr<Entry>& slot = table().entries[static_cast<size_t>(h)];
  if (slot->pins > 0) {
    slot->parked = true;
    table().parked.push_back(slot);
  }
  slot.reset();
}

// ---- building type maps ---------------------------------------------------------------------
// `n` consecutive elements of `t` (each t->extent after the previous) at byte displacement
// `disp`: every constructor is a list of these in type-map order.
struct Piece {
  const Entry* t;
  MPI_Aint disp;
  int64_t n;
};

inline void append_block(std::vector<Block>& blocks, MPI_Aint offset, int64_t bytes) {
  if (bytes <= 0) return;
  if (!blocks.empty() && blocks.back().offset + blocks.back().bytes == offset) blocks.back().bytes += bytes;
  else blocks.push_back(Block{offset, bytes});
}

inline void append_run(std::vector<Run>& runs, MPI_Aint offset, int64_t count, uint8_t elem) {
  if (count <= 0) return;
  if (!runs.empty()) {
    Run& r = runs.back();
    if (r.elem == elem && r.offset + r.count * native_of(elem) == offset) {
      r.count += count;
      return;
    }
  }
  runs.push_back(Run{offset, count, elem});
}

// Appends the runs of one element of `t` at `base`.
void append_runs_of(std::vector<Run>& runs, const Entry& t, MPI_Aint base) {
  if (t.uniform == kMixed) {
    for (const Run& r : t.runs) append_run(runs, base + r.offset, r.count, r.elem);
  } else if (t.uniform != kNone) {
    const int native = native_of(t.uniform);
    for (const Block& b : t.blocks) append_run(runs, base + b.offset, b.bytes / native, t.uniform);
  }
}

// Fills the layout of `out` from `pieces`. `struct_padding`: MPI_Type_create_struct rounds the
// extent up to the alignment of the most-aligned member (unless an explicit ub is set).
void compose(Entry* out, const std::vector<Piece>& pieces, bool struct_padding) {
  constexpr MPI_Aint kMax = std::numeric_limits<MPI_Aint>::max();
  constexpr MPI_Aint kMin = std::numeric_limits<MPI_Aint>::min();
  int64_t size = 0, nelems = 0, ext_size = 0, basic_count = 0, align = 1;
  xmsg_datatype_t basic = 0;
  bool basic_seen = false, basic_mixed = false;
  xmsg_datatype_t empty_basic = 0;
  bool empty_basic_seen = false, empty_basic_mixed = false;
  uint8_t uniform = kNone;
  bool any = false, any_data = false, lbm = false, ubm = false;
  MPI_Aint lb_m = kMax, ub_m = kMin, lb_a = kMax, ub_a = kMin, tlo = kMax, thi = kMin;
  size_t block_estimate = 0;
  for (const Piece& p : pieces) {
    const Entry& t = *p.t;
    if (!empty_basic_seen) {
      empty_basic = t.basic;
      empty_basic_seen = true;
    } else if (empty_basic != t.basic) {
      empty_basic_mixed = true;
    }
    if (p.n <= 0) continue;
    any = true;
    const MPI_Aint span = static_cast<MPI_Aint>(p.n - 1) * t.extent;
    const MPI_Aint span_lo = std::min<MPI_Aint>(0, span), span_hi = std::max<MPI_Aint>(0, span);
    const MPI_Aint lo = p.disp + t.lb + span_lo, hi = p.disp + t.lb + t.extent + span_hi;
    lb_a = std::min(lb_a, lo);
    ub_a = std::max(ub_a, hi);
    if (t.lb_marker) {
      lbm = true;
      lb_m = std::min(lb_m, lo);
    }
    if (t.ub_marker) {
      ubm = true;
      ub_m = std::max(ub_m, hi);
    }
    align = std::max(align, t.align);
    if (t.size <= 0) continue;
    any_data = true;
    size += p.n * t.size;
    nelems += p.n * t.nelems;
    ext_size += p.n * t.ext_size;
    tlo = std::min(tlo, p.disp + t.true_lb + span_lo);
    thi = std::max(thi, p.disp + t.true_lb + t.true_extent + span_hi);
    if (!basic_seen) {
      basic = t.basic;
      basic_seen = true;
    } else if (basic != t.basic) {
      basic_mixed = true;
    }
    basic_count += p.n * t.basic_count;
    if (uniform == kNone) uniform = t.uniform;
    else if (uniform != t.uniform) uniform = kMixed;
    block_estimate += t.contiguous ? 1 : static_cast<size_t>(p.n) * t.blocks.size();
  }

  out->size = size;
  out->nelems = nelems;
  out->ext_size = ext_size;
  out->align = align;
  out->lb_marker = lbm;
  out->ub_marker = ubm;
  MPI_Aint lb = 0, ub = 0;
  if (any) {
    lb = lbm ? lb_m : lb_a;
    ub = ubm ? ub_m : ub_a;
  }
  if (struct_padding && !ubm && align > 1) {
    MPI_Aint extent = ub - lb;
    if (extent > 0 && extent % align != 0) ub += align - extent % align;
  }
  out->lb = lb;
  out->extent = ub - lb;
  if (any_data) {
    out->true_lb = tlo;
    out->true_extent = thi - tlo;
  } else {
    out->true_lb = 0;
    out->true_extent = 0;
  }
  if (any_data) {
    out->basic = basic_mixed ? 0 : basic;
    out->basic_count = basic_mixed ? 0 : basic_count;
  } else {
    out->basic = empty_basic_mixed ? 0 : empty_basic;
    out->basic_count = 0;
  }
  out->uniform = uniform;

  out->blocks.clear();
  out->runs.clear();
  out->blocks.reserve(std::min<size_t>(block_estimate, size_t{1} << 20));
  for (const Piece& p : pieces) {
    const Entry& t = *p.t;
    if (p.n <= 0 || t.size <= 0) continue;
    if (t.contiguous) {
      append_block(out->blocks, p.disp + t.true_lb, p.n * t.size);
      continue;
    }
    for (int64_t j = 0; j < p.n; ++j) {
      const MPI_Aint base = p.disp + static_cast<MPI_Aint>(j) * t.extent;
      for (const Block& b : t.blocks) append_block(out->blocks, base + b.offset, b.bytes);
    }
  }
  if (uniform == kMixed) {
    for (const Piece& p : pieces) {
      const Entry& t = *p.t;
      if (p.n <= 0 || t.size <= 0) continue;
      for (int64_t j = 0; j < p.n; ++j) append_runs_of(out->runs, t, p.disp + static_cast<MPI_Aint>(j) * t.extent);
    }
  }
  finalize(out);
}

void copy_layout(Entry* dst, const Entry& src) {
  dst->size = src.size;
  dst->lb = src.lb;
  dst->extent = src.extent;
  dst->true_lb = src.true_lb;
  dst->true_extent = src.true_extent;
  dst->blocks = src.blocks;
  dst->basic = src.basic;
  dst->basic_count = src.basic_count;
  dst->align = src.align;
  dst->lb_marker = src.lb_marker;
  dst->ub_marker = src.ub_marker;
  dst->uniform = src.uniform;
  dst->runs = src.runs;
  dst->nelems = src.nelems;
  dst->ext_size = src.ext_size;
}

// ---- argument checks --------------------------------------------------------------------------
constexpr MPI_Comm kTypeComm = MPI_COMM_WORLD;  // whose error handler datatype errors go to

// A valid (not necessarily committed) type.
int lookup(MPI_Datatype d, const char* func, const char* arg, const Entry** out) {
  const Entry* e = entry_of(d);
  if (!e) {
    if (d == MPI_DATATYPE_NULL) return fail(MPI_ERR_TYPE, func, kTypeComm, "%s is MPI_DATATYPE_NULL", arg);
    return fail(MPI_ERR_TYPE, func, kTypeComm, "%s %d is not a valid datatype", arg, d);
  }
  *out = e;
  return MPI_SUCCESS;
}

int lookup_committed(MPI_Datatype d, const char* func, const char* arg, const Entry** out) {
  if (int e = lookup(d, func, arg, out)) return e;
  if (!(*out)->committed) return fail(MPI_ERR_TYPE, func, kTypeComm, "%s %d is not committed", arg, d);
  return MPI_SUCCESS;
}

#define XMSG_CHECK_PTR(ptr, func)                                                         \
  do {                                                                                    \
    if ((ptr) == nullptr) return fail(MPI_ERR_ARG, func, kTypeComm, "%s is NULL", #ptr); \
  } while (0)

int check_count(int count, const char* func, const char* what = "count") {
  if (count < 0) return fail(MPI_ERR_COUNT, func, kTypeComm, "%s %d is negative", what, count);
  return MPI_SUCCESS;
}

int check_blocklength(int bl, const char* func) {
  if (bl < 0) return fail(MPI_ERR_ARG, func, kTypeComm, "blocklength %d is negative", bl);
  return MPI_SUCCESS;
}

int check_blocklengths(int count, const int* bl, const char* func) {
  for (int i = 0; i < count; ++i)
    if (bl[i] < 0)
      return fail(MPI_ERR_ARG, func, kTypeComm, "array_of_blocklengths[%d] = %d is negative", i, bl[i]);
  return MPI_SUCCESS;
}

int no_memory(const char* func) {
  return fail(MPI_ERR_NO_MEM, func, kTypeComm, "out of memory building the datatype");
}

// Registers a derived type built from `refs` (kept alive) and returns its handle in *newtype.
int publish(std::shared_ptr<Entry> e, std::vector<std::shared_ptr<const Entry>> refs, const char* func,
            MPI_Datatype* newtype) {
  e->refs = std::move(refs);
  e->types.clear();
  for (const auto& r : e->refs) e->types.push_back(r->handle);
  int h = add_entry(std::move(e));
  if (h == MPI_DATATYPE_NULL) return fail(MPI_ERR_INTERN, func, kTypeComm, "no datatype handle left");
  *newtype = h;
  return MPI_SUCCESS;
}

std::shared_ptr<const Entry> ref_of(MPI_Datatype d) { return shared_entry_of(d); }

// The common tail of the constructors over one old type: pieces in, new handle out.
int build_over(MPI_Datatype oldtype, const std::vector<Piece>& pieces, int combiner, std::vector<int> ints,
               std::vector<MPI_Aint> addresses, const char* func, MPI_Datatype* newtype) {
  auto e = std::make_shared<Entry>();
  compose(e.get(), pieces, false);
  e->combiner = combiner;
  e->ints = std::move(ints);
  e->addresses = std::move(addresses);
  return publish(std::move(e), {ref_of(oldtype)}, func, newtype);
}

// Sets explicit bounds lb and lb + extent (resized, subarray, darray).
void set_bounds(Entry* e, MPI_Aint lb, MPI_Aint extent) {
  e->lb = lb;
  e->extent = extent;
  e->lb_marker = true;
  e->ub_marker = true;
  finalize(e);
}

// ---- pack / unpack kernels ------------------------------------------------------------------
template <size_t L>
inline void gather_fixed(char* out, uintptr_t p, int64_t n, MPI_Aint stride) {
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(out, cptr(p), L);
    out += L;
    p = add(p, stride);
  }
}

template <size_t L>
inline void scatter_fixed(const char* in, uintptr_t p, int64_t n, MPI_Aint stride) {
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(mptr(p), in, L);
    in += L;
    p = add(p, stride);
  }
}

// n blocks of len bytes, stride apart, starting at p, into out (contiguous).
void gather(char* out, uintptr_t p, int64_t n, MPI_Aint stride, int64_t len) {
  switch (len) {
    case 1: gather_fixed<1>(out, p, n, stride); return;
    case 2: gather_fixed<2>(out, p, n, stride); return;
    case 4: gather_fixed<4>(out, p, n, stride); return;
    case 8: gather_fixed<8>(out, p, n, stride); return;
    case 12: gather_fixed<12>(out, p, n, stride); return;
    case 16: gather_fixed<16>(out, p, n, stride); return;
    case 24: gather_fixed<24>(out, p, n, stride); return;
    case 32: gather_fixed<32>(out, p, n, stride); return;
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(out, cptr(p), static_cast<size_t>(len));
        out += len;
        p = add(p, stride);
      }
  }
}

void scatter(const char* in, uintptr_t p, int64_t n, MPI_Aint stride, int64_t len) {
  switch (len) {
    case 1: scatter_fixed<1>(in, p, n, stride); return;
    case 2: scatter_fixed<2>(in, p, n, stride); return;
    case 4: scatter_fixed<4>(in, p, n, stride); return;
    case 8: scatter_fixed<8>(in, p, n, stride); return;
    case 12: scatter_fixed<12>(in, p, n, stride); return;
    case 16: scatter_fixed<16>(in, p, n, stride); return;
    case 24: scatter_fixed<24>(in, p, n, stride); return;
    case 32: scatter_fixed<32>(in, p, n, stride); return;
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(mptr(p), in, static_cast<size_t>(len));
        in += len;
        p = add(p, stride);
      }
  }
}

inline void copy_block(void* dst, const void* src, int64_t len) {
  switch (len) {
    case 4: std::memcpy(dst, src, 4); return;
    case 8: std::memcpy(dst, src, 8); return;
    case 16: std::memcpy(dst, src, 16); return;
    default: std::memcpy(dst, src, static_cast<size_t>(len));
  }
}

// Fixed-stride layout of a type: the blocks of an Entry when they repeat at a fixed stride, or
// the one block of any type (its stride the extent). n == 0: use the block list.
struct Stride {
  int64_t n = 0, len = 0;
  MPI_Aint first = 0, stride = 0;
};

inline Stride stride_of(const Type& t) {
  Stride s;
  if (const Entry* e = entry_behind(t)) {
    if (e->reg_n >= 1) s = Stride{e->reg_n, e->reg_len, e->reg_first, e->reg_n == 1 ? e->extent : e->reg_stride};
  } else if (t.blocks.size() == 1) {
    s = Stride{1, t.blocks[0].bytes, t.blocks[0].offset, t.extent};
  }
  return s;
}

// Whole elements [0, count).
void pack_elements(uintptr_t in, int64_t count, const Type& t, char* out) {
  if (count <= 0 || t.size <= 0) return;
  if (t.contiguous) {
    std::memcpy(out, cptr(add(in, t.true_lb)), static_cast<size_t>(count * t.size));
    return;
  }
  const Stride s = stride_of(t);
  if (s.n == 1 || (s.n >= 2 && t.extent == s.n * s.stride)) {
    // Every block of every element at one stride.
    gather(out, add(in, s.first), count * s.n, s.stride, s.len);
    return;
  }
  if (s.n >= 2) {
    for (int64_t e = 0; e < count; ++e) {
      gather(out, add(in, static_cast<MPI_Aint>(e) * t.extent + s.first), s.n, s.stride, s.len);
      out += t.size;
    }
    return;
  }
  for (int64_t e = 0; e < count; ++e) {
    const uintptr_t base = add(in, static_cast<MPI_Aint>(e) * t.extent);
    for (const Block& b : t.blocks) {
      copy_block(out, cptr(add(base, b.offset)), b.bytes);
      out += b.bytes;
    }
  }
}

void unpack_elements(const char* in, uintptr_t outbuf, int64_t count, const Type& t) {
  if (count <= 0 || t.size <= 0) return;
  if (t.contiguous) {
    std::memcpy(mptr(add(outbuf, t.true_lb)), in, static_cast<size_t>(count * t.size));
    return;
  }
  const Stride s = stride_of(t);
  if (s.n == 1 || (s.n >= 2 && t.extent == s.n * s.stride)) {
    scatter(in, add(outbuf, s.first), count * s.n, s.stride, s.len);
    return;
  }
  if (s.n >= 2) {
    for (int64_t e = 0; e < count; ++e) {
      scatter(in, add(outbuf, static_cast<MPI_Aint>(e) * t.extent + s.first), s.n, s.stride, s.len);
      in += t.size;
    }
    return;
  }
  for (int64_t e = 0; e < count; ++e) {
    const uintptr_t base = add(outbuf, static_cast<MPI_Aint>(e) * t.extent);
    for (const Block& b : t.blocks) {
      copy_block(mptr(add(base, b.offset)), in, b.bytes);
      in += b.bytes;
    }
  }
}

// ---- pieces of the packed stream ------------------------------------------------------------
// Bytes [from, from + n) of one element's data (type-map order), between the element at `base`
// and `stream`. Pack: element -> stream.
template <bool Pack>
void move_part(char* stream, uintptr_t a, int64_t n) {
  if constexpr (Pack) std::memcpy(stream, cptr(a), static_cast<size_t>(n));
  else std::memcpy(mptr(a), stream, static_cast<size_t>(n));
}

template <bool Pack>
void element_part(uintptr_t base, const Type& t, int64_t from, int64_t n, char* stream) {
  const Stride s = stride_of(t);
  if (s.n >= 1) {
    // Regular blocks: straight to the one holding `from`; a part block at each end, the whole
    // blocks between through the fixed-size gather/scatter loops (a vector of one element with
    // many blocks, as OSU's -D vect sends, is all middle).
    int64_t i = from / s.len;
    const int64_t within = from % s.len;
    if (within) {
      const int64_t m = std::min(n, s.len - within);
      move_part<Pack>(stream, add(base, s.first + static_cast<MPI_Aint>(i) * s.stride + within), m);
      stream += m;
      n -= m;
      ++i;
    }
    const int64_t whole = n / s.len;
    const uintptr_t at = add(base, s.first + static_cast<MPI_Aint>(i) * s.stride);
    if constexpr (Pack) gather(stream, at, whole, s.stride, s.len);
    else scatter(stream, at, whole, s.stride, s.len);
    stream += whole * s.len;
    n -= whole * s.len;
    i += whole;
    if (n) move_part<Pack>(stream, add(base, s.first + static_cast<MPI_Aint>(i) * s.stride), n);
    return;
  }
  for (const Block& b : t.blocks) {
    if (from >= b.bytes) {
      from -= b.bytes;
      continue;
    }
    const int64_t m = std::min(n, b.bytes - from);
    move_part<Pack>(stream, add(base, b.offset + from), m);
    stream += m;
    n -= m;
    from = 0;
    if (n == 0) return;
  }
}

// A leading part element, whole elements through the block copies of pack_elements, a trailing
// part element: a piece costs what packing its bytes costs, plus one walk of one element's
// blocks (irregular types) to find where it starts.
template <bool Pack>
void stream_range(uintptr_t buf, const Type& t, int64_t offset, int64_t n, char* stream) {
  if (n <= 0 || t.size <= 0) return;
  if (t.contiguous) {
    move_part<Pack>(stream, add(buf, t.true_lb + offset), n);
    return;
  }
  int64_t e = offset / t.size;
  const int64_t r = offset % t.size;
  if (r) {
    const int64_t m = std::min(n, t.size - r);
    element_part<Pack>(add(buf, static_cast<MPI_Aint>(e) * t.extent), t, r, m, stream);
    stream += m;
    n -= m;
    ++e;
  }
  if (const int64_t whole = n / t.size) {
    const uintptr_t at = add(buf, static_cast<MPI_Aint>(e) * t.extent);
    if constexpr (Pack) pack_elements(at, whole, t, stream);
    else unpack_elements(stream, at, whole, t);
    stream += whole * t.size;
    n -= whole * t.size;
    e += whole;
  }
  if (n) element_part<Pack>(add(buf, static_cast<MPI_Aint>(e) * t.extent), t, 0, n, stream);
}

// ---- external32 ----------------------------------------------------------------------------
constexpr bool kLittle = std::endian::native == std::endian::little;

template <class U>
inline U bswap(U v) {
  if constexpr (!kLittle || sizeof(U) == 1) return v;
  else if constexpr (sizeof(U) == 2) return static_cast<U>(__builtin_bswap16(v));
  else if constexpr (sizeof(U) == 4) return static_cast<U>(__builtin_bswap32(v));
  else return static_cast<U>(__builtin_bswap64(v));
}

template <class U>
void swap_units(const char* src, int64_t n, char* dst) {
  for (int64_t i = 0; i < n; ++i) {
    U v;
    std::memcpy(&v, src + i * static_cast<int64_t>(sizeof(U)), sizeof(U));
    v = bswap(v);
    std::memcpy(dst + i * static_cast<int64_t>(sizeof(U)), &v, sizeof(U));
  }
}

inline uint64_t load_native_uint(const char* p, int bytes) {
  switch (bytes) {
    case 2: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { uint64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

inline void store_native_uint(char* p, int bytes, uint64_t v) {
  switch (bytes) {
    case 2: { uint16_t w = static_cast<uint16_t>(v); std::memcpy(p, &w, 2); return; }
    case 4: { uint32_t w = static_cast<uint32_t>(v); std::memcpy(p, &w, 4); return; }
    default: std::memcpy(p, &v, 8); return;
  }
}

inline void store_be(char* p, int bytes, uint64_t v) {
  for (int i = bytes - 1; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

inline uint64_t load_be(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Integers whose external32 size differs from the native one: truncated on the way out,
// sign- or zero-extended on the way in.
void int_to_ext(const char* src, int64_t n, char* dst, int native, int ext) {
  for (int64_t i = 0; i < n; ++i) store_be(dst + i * ext, ext, load_native_uint(src + i * native, native));
}

void int_from_ext(const char* src, int64_t n, char* dst, int native, int ext, bool is_signed) {
  for (int64_t i = 0; i < n; ++i) {
    uint64_t v = load_be(src + i * ext, ext);
    if (is_signed && ext < 8 && (v >> (8 * ext - 1)) != 0) v |= ~uint64_t{0} << (8 * ext);
    store_native_uint(dst + i * native, native, v);
  }
}

// long double <-> IEEE binary128, big-endian.
void ld_to_ext(const char* src, char* dst) {
#if LDBL_MANT_DIG == 64
  // x87 extended: 64-bit mantissa with an explicit integer bit, then sign and 15-bit exponent
  // (the same bias as binary128).
  uint64_t mant;
  uint16_t se;
  std::memcpy(&mant, src, 8);
  std::memcpy(&se, src + 8, 2);
  uint64_t hi = (static_cast<uint64_t>(se) << 48) | ((mant << 1) >> 16);
  uint64_t lo = mant << 49;
  store_be(dst, 8, hi);
  store_be(dst + 8, 8, lo);
#elif LDBL_MANT_DIG == 113
  uint64_t w[2];
  std::memcpy(w, src, 16);
  if (kLittle) {
    store_be(dst, 8, w[1]);
    store_be(dst + 8, 8, w[0]);
  } else {
    std::memcpy(dst, src, 16);
  }
#else
  // long double is double: widen to binary128.
  double d;
  std::memcpy(&d, src, sizeof d);
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  uint64_t sign = bits >> 63, exp = (bits >> 52) & 0x7ff, frac = bits & ((uint64_t{1} << 52) - 1);
  uint64_t qexp = exp == 0 ? 0 : exp == 0x7ff ? 0x7fff : exp - 1023 + 16383;
  uint64_t hi = (sign << 63) | (qexp << 48) | (frac >> 4), lo = frac << 60;
  store_be(dst, 8, hi);
  store_be(dst + 8, 8, lo);
#endif
}

void ld_from_ext(const char* src, char* dst) {
  uint64_t hi = load_be(src, 8), lo = load_be(src + 8, 8);
#if LDBL_MANT_DIG == 64
  uint16_t se = static_cast<uint16_t>(hi >> 48);
  uint64_t mant = ((hi & ((uint64_t{1} << 48) - 1)) << 15) | (lo >> 49);
  if ((se & 0x7fff) != 0) mant |= uint64_t{1} << 63;
  std::memset(dst, 0, sizeof(long double));
  std::memcpy(dst, &mant, 8);
  std::memcpy(dst + 8, &se, 2);
#elif LDBL_MANT_DIG == 113
  uint64_t w[2] = {lo, hi};
  if (kLittle) std::memcpy(dst, w, 16);
  else std::memcpy(dst, src, 16);
#else
  uint64_t sign = hi >> 63, qexp = (hi >> 48) & 0x7fff, frac = ((hi & ((uint64_t{1} << 48) - 1)) << 4) | (lo >> 60);
  uint64_t exp = qexp == 0 ? 0 : qexp == 0x7fff ? 0x7ff : qexp - 16383 + 1023;
  uint64_t bits = (sign << 63) | (exp << 52) | frac;
  double d;
  std::memcpy(&d, &bits, 8);
  std::memcpy(dst, &d, sizeof d);
#endif
}

// n elements of kind e from memory to external32; returns the external bytes written.
int64_t elems_to_ext(uint8_t e, const char* src, int64_t n, char* dst) {
  switch (e) {
    case kE1: std::memcpy(dst, src, static_cast<size_t>(n)); break;
    case kI2: swap_units<uint16_t>(src, n, dst); break;
    case kI4: case kF4: swap_units<uint32_t>(src, n, dst); break;
    case kI8: case kF8: swap_units<uint64_t>(src, n, dst); break;
    case kCF: swap_units<uint32_t>(src, 2 * n, dst); break;
    case kCD: swap_units<uint64_t>(src, 2 * n, dst); break;
    case kLong: case kULong: case kWchar: int_to_ext(src, n, dst, native_of(e), ext_of(e)); break;
    case kLD:
      for (int64_t i = 0; i < n; ++i) ld_to_ext(src + i * native_of(kLD), dst + i * 16);
      break;
    case kCLD:
      for (int64_t i = 0; i < 2 * n; ++i) ld_to_ext(src + i * native_of(kLD), dst + i * 16);
      break;
    default: break;
  }
  return n * ext_of(e);
}

int64_t elems_from_ext(uint8_t e, const char* src, int64_t n, char* dst) {
  switch (e) {
    case kE1: std::memcpy(dst, src, static_cast<size_t>(n)); break;
    case kI2: swap_units<uint16_t>(src, n, dst); break;
    case kI4: case kF4: swap_units<uint32_t>(src, n, dst); break;
    case kI8: case kF8: swap_units<uint64_t>(src, n, dst); break;
    case kCF: swap_units<uint32_t>(src, 2 * n, dst); break;
    case kCD: swap_units<uint64_t>(src, 2 * n, dst); break;
    case kLong: int_from_ext(src, n, dst, native_of(e), ext_of(e), true); break;
    case kULong: int_from_ext(src, n, dst, native_of(e), ext_of(e), false); break;
    case kWchar: int_from_ext(src, n, dst, native_of(e), ext_of(e), std::is_signed_v<wchar_t>); break;
    case kLD:
      for (int64_t i = 0; i < n; ++i) ld_from_ext(src + i * 16, dst + i * native_of(kLD));
      break;
    case kCLD:
      for (int64_t i = 0; i < 2 * n; ++i) ld_from_ext(src + i * 16, dst + i * native_of(kLD));
      break;
    default: break;
  }
  return n * ext_of(e);
}

void pack_external(uintptr_t in, int64_t count, const Entry& t, char* out) {
  if (t.size <= 0) return;
  for (int64_t i = 0; i < count; ++i) {
    const uintptr_t base = add(in, static_cast<MPI_Aint>(i) * t.extent);
    if (t.uniform == kMixed) {
      for (const Run& r : t.runs)
        out += elems_to_ext(r.elem, static_cast<const char*>(cptr(add(base, r.offset))), r.count, out);
    } else {
      const int native = native_of(t.uniform);
      for (const Block& b : t.blocks)
        out += elems_to_ext(t.uniform, static_cast<const char*>(cptr(add(base, b.offset))), b.bytes / native, out);
    }
  }
}

void unpack_external(const char* in, uintptr_t outbuf, int64_t count, const Entry& t) {
  if (t.size <= 0) return;
  for (int64_t i = 0; i < count; ++i) {
    const uintptr_t base = add(outbuf, static_cast<MPI_Aint>(i) * t.extent);
    if (t.uniform == kMixed) {
      for (const Run& r : t.runs)
        in += elems_from_ext(r.elem, in, r.count, static_cast<char*>(mptr(add(base, r.offset))));
    } else {
      const int native = native_of(t.uniform);
      for (const Block& b : t.blocks)
        in += elems_from_ext(t.uniform, in, b.bytes / native, static_cast<char*>(mptr(add(base, b.offset))));
    }
  }
}

// ---- elements in received bytes ------------------------------------------------------------
// Bytes one element of `d` occupies in a message: xmsg's size for its own predefined types
// (which travel as they are), the data size otherwise.
int64_t wire_size(MPI_Datatype d, const Entry& t) {
  return is_xmsg_type(d) ? static_cast<int64_t>(xmsgi_type_size(d)) : t.size;
}

// Basic elements in the first `rem` bytes of one element (rem < wire size); -1 when `rem`
// ends inside a basic element.
int64_t partial_elements(MPI_Datatype d, const Entry& t, int64_t rem) {
  if (rem == 0) return 0;
  if (t.uniform != kMixed) {
    if (t.uniform == kNone) return -1;
    const int native = native_of(t.uniform);
    return rem % native == 0 ? rem / native : -1;
  }
  int64_t n = 0;
  if (is_xmsg_type(d)) {
    // Pair types as they travel: the struct's memory layout.
    for (const Run& r : t.runs) {
      const int64_t end = r.offset + r.count * native_of(r.elem);
      if (rem >= end) {
        n += r.count;
      } else if (rem > r.offset) {
        return -1;
      }
    }
    return n;
  }
  for (const Run& r : t.runs) {
    const int native = native_of(r.elem);
    const int64_t bytes = r.count * native;
    if (rem >= bytes) {
      n += r.count;
      rem -= bytes;
      if (rem == 0) return n;
    } else {
      if (rem % native != 0) return -1;
      return n + rem / native;
    }
  }
  return rem == 0 ? n : -1;
}

// Elements in `bytes` received as `d`; -1 when not a whole number of basic elements.
int64_t elements_in(MPI_Datatype d, const Entry& t, int64_t bytes) {
  const int64_t wire = wire_size(d, t);
  if (wire <= 0) return bytes == 0 ? 0 : -1;
  const int64_t full = bytes / wire, rem = bytes % wire;
  const int64_t part = partial_elements(d, t, rem);
  if (part < 0) return -1;
  return full * t.nelems + part;
}

// Bytes of `count` basic elements of `d` (the inverse of elements_in).
int64_t bytes_of_elements(MPI_Datatype d, const Entry& t, int64_t count) {
  const int64_t wire = wire_size(d, t);
  if (t.nelems <= 0) return 0;
  const int64_t full = count / t.nelems;
  int64_t rem = count % t.nelems;
  int64_t bytes = full * wire;
  if (rem == 0) return bytes;
  if (t.uniform != kMixed) return bytes + rem * native_of(t.uniform);
  if (is_xmsg_type(d)) {
    for (const Run& r : t.runs) {
      if (rem <= r.count) return bytes + r.offset + rem * native_of(r.elem);
      rem -= r.count;
    }
    return bytes;
  }
  for (const Run& r : t.runs) {
    if (rem <= r.count) return bytes + rem * native_of(r.elem);
    bytes += r.count * native_of(r.elem);
    rem -= r.count;
  }
  return bytes;
}

// ---- subarray / darray ------------------------------------------------------------------------
// Pieces of an array of `sizes` elements of `old` (dimension order `fast_to_slow` fastest
// first) selecting, in dimension d, the index ranges ranges[d] (sorted, each [begin, end)), in
// type-map order (slowest dimension outermost).
struct Range {
  int64_t begin, end;
};

void array_pieces(const Entry* old, const std::vector<int64_t>& sizes, const std::vector<int>& fast_to_slow,
                  const std::vector<std::vector<Range>>& ranges, std::vector<Piece>* pieces) {
  const size_t nd = sizes.size();
  std::vector<int64_t> stride(nd);  // in elements of old
  int64_t s = 1;
  for (size_t k = 0; k < nd; ++k) {
    stride[static_cast<size_t>(fast_to_slow[k])] = s;
    s *= sizes[static_cast<size_t>(fast_to_slow[k])];
  }
  for (const auto& r : ranges)
    if (r.empty()) return;
  const int fast = fast_to_slow[0];
  // Odometer over the indices of the slower dimensions (k = 1 .. nd-1), slowest outermost.
  std::vector<size_t> range_at(nd, 0);
  std::vector<int64_t> index(nd, 0);
  for (size_t k = 1; k < nd; ++k) {
    const size_t d = static_cast<size_t>(fast_to_slow[k]);
    index[d] = ranges[d][0].begin;
  }
  while (true) {
    int64_t base = 0;
    for (size_t k = 1; k < nd; ++k) {
      size_t d = static_cast<size_t>(fast_to_slow[k]);
      base += index[d] * stride[d];
    }
    const int64_t fast_stride = stride[static_cast<size_t>(fast)];
    for (const Range& r : ranges[static_cast<size_t>(fast)])
      pieces->push_back(
          Piece{old, static_cast<MPI_Aint>((base + r.begin * fast_stride) * old->extent), r.end - r.begin});
    // Advance the odometer: dimension fast_to_slow[1] fastest.
    size_t k = 1;
    for (; k < nd; ++k) {
      size_t d = static_cast<size_t>(fast_to_slow[k]);
      const auto& rs = ranges[d];
      if (index[d] + 1 < rs[range_at[d]].end) {
        ++index[d];
        break;
      }
      if (range_at[d] + 1 < rs.size()) {
        ++range_at[d];
        index[d] = rs[range_at[d]].begin;
        break;
      }
      range_at[d] = 0;
      index[d] = rs[0].begin;
    }
    if (k >= nd) break;
  }
}

std::vector<int> order_dims(int ndims, int order) {
  std::vector<int> f(static_cast<size_t>(ndims));
  for (int i = 0; i < ndims; ++i) f[static_cast<size_t>(i)] = order == MPI_ORDER_C ? ndims - 1 - i : i;
  return f;
}

}  // namespace

// ---- the internal interface ---------------------------------------------------------------------
const Type* type_of(MPI_Datatype datatype) { return entry_of(datatype); }

Type* mutable_type_of(MPI_Datatype datatype) { return const_cast<Entry*>(entry_of(datatype)); }

int check_type(MPI_Datatype datatype, const char* func, const char* arg, MPI_Comm comm, const Type** out) {
  const Entry* e = entry_of(datatype);
  if (!e) {
    if (datatype == MPI_DATATYPE_NULL) return fail(MPI_ERR_TYPE, func, comm, "%s is MPI_DATATYPE_NULL", arg);
    return fail(MPI_ERR_TYPE, func, comm, "%s %d is not a valid datatype", arg, datatype);
  }
  if (!e->committed) return fail(MPI_ERR_TYPE, func, comm, "%s %d is not committed", arg, datatype);
  if (out) *out = e;
  return MPI_SUCCESS;
}

void pack_range(const void* buf, const Type& type, int64_t offset, int64_t n, void* out) {
  stream_range<true>(addr(buf), type, offset, n, static_cast<char*>(out));
}

void unpack_range(const void* in, const Type& type, int64_t offset, int64_t n, void* buf) {
  stream_range<false>(addr(buf), type, offset, n, const_cast<char*>(static_cast<const char*>(in)));
}

void TypeLayout::pack(uint64_t offset, void* dst, uint64_t n) const {
  pack_range(buf, *type, static_cast<int64_t>(offset), static_cast<int64_t>(n), dst);
}

void TypeLayout::unpack(uint64_t offset, const void* src, uint64_t n) const {
  unpack_range(src, *type, static_cast<int64_t>(offset), static_cast<int64_t>(n), const_cast<void*>(buf));
}

MPI_Datatype private_type(MPI_Datatype datatype) {
  const std::shared_ptr<Entry> e = shared_entry_of(datatype);
  if (!e || e->predefined) return datatype;
  auto copy = std::make_shared<Entry>(*e);
  copy->attrs.values.clear();
  copy->pins = 0;
  copy->parked = false;
  const MPI_Datatype h = add_entry(std::move(copy));
  return h == MPI_DATATYPE_NULL ? datatype : h;
}

void free_private_type(MPI_Datatype datatype) {
  const Entry* e = entry_of(datatype);
  if (e && !e->predefined) drop_handle(datatype);
}

void unpark_type(const Type* type) {
  auto& parked = table().parked;
  auto it = std::find_if(parked.begin(), parked.end(), [&](const auto& e) { return e.get() == type; });
  if (it != parked.end()) parked.erase(it);
}

void pack(const void* inbuf, int64_t count, const Type& type, void* out) {
  pack_elements(addr(inbuf), count, type, static_cast<char*>(out));
}

void unpack(const void* in, int64_t bytes, void* outbuf, int64_t count, const Type& type) {
  const Type& t = type;
  if (count <= 0 || t.size <= 0 || bytes <= 0) return;
  const int64_t whole = std::min(count, bytes / t.size);
  const char* src = static_cast<const char*>(in);
  unpack_elements(src, addr(outbuf), whole, t);
  int64_t rem = std::min(bytes - whole * t.size, (count - whole) * t.size);
  if (rem <= 0) return;
  src += whole * t.size;
  const uintptr_t base = add(addr(outbuf), static_cast<MPI_Aint>(whole) * t.extent);
  for (const Block& b : t.blocks) {
    const int64_t n = std::min(rem, b.bytes);
    std::memcpy(mptr(add(base, b.offset)), src, static_cast<size_t>(n));
    src += n;
    rem -= n;
    if (rem == 0) break;
  }
}

namespace {
// The layout of a packed message of (buf, t): pins a derived type until the message completes.
void describe(TypeLayout* layout, const void* buf, const Entry& t) {
  layout->buf = buf;
  layout->type = &t;
  if (!t.predefined) layout->keep = TypePin(&t);
}
}  // namespace

int SendView::init(const void* buf, int64_t n, MPI_Datatype datatype, const char* func, MPI_Comm comm,
                   bool allow_packed) {
  owned.reset();
  packed = false;
  layout.keep.reset();
  if (n < 0) return fail(MPI_ERR_COUNT, func, comm, "count %lld is negative", static_cast<long long>(n));
  if (is_xmsg_type(datatype)) {
    data = buf;
    count = n;
    xtype = datatype;
    bytes = n * static_cast<int64_t>(xmsgi_type_size(datatype));
    return MPI_SUCCESS;
  }
  const Type* tp = nullptr;
  if (int e = check_type(datatype, func, "datatype", comm, &tp)) return e;
  const Entry& t = *static_cast<const Entry*>(tp);
  if (t.size > 0 && n > std::numeric_limits<int64_t>::max() / t.size)
    return fail(MPI_ERR_COUNT, func, comm, "count %lld of datatype %d exceeds the addressable bytes",
                static_cast<long long>(n), datatype);
  bytes = n * t.size;
  if (t.basic != 0) {
    xtype = t.basic;
    count = n * t.basic_count;
  } else {
    xtype = XMSG_BYTE;
    count = bytes;
  }
  if (t.contiguous || bytes == 0) {
    data = t.contiguous ? cptr(add(addr(buf), t.true_lb)) : buf;
    return MPI_SUCCESS;
  }
  if (allow_packed) {
    packed = true;
    describe(&layout, buf, t);
    data = nullptr;
    return MPI_SUCCESS;
  }
  try {
    owned = staging_buffer(bytes);
  } catch (const std::bad_alloc&) {
    return fail(MPI_ERR_NO_MEM, func, comm, "no memory to pack %lld bytes", static_cast<long long>(bytes));
  }
  pack_elements(addr(buf), n, t, owned.get());
  data = owned.get();
  return MPI_SUCCESS;
}

int RecvView::init(void* buf, int64_t n, MPI_Datatype datatype, const char* func, MPI_Comm comm,
                   bool allow_packed) {
  owned.reset();
  packed = false;
  layout.keep.reset();
  keep.reset();
  user = buf;
  user_count = n;
  type = nullptr;
  if (n < 0) return fail(MPI_ERR_COUNT, func, comm, "count %lld is negative", static_cast<long long>(n));
  if (is_xmsg_type(datatype)) {
    data = buf;
    count = n;
    xtype = datatype;
    bytes = n * static_cast<int64_t>(xmsgi_type_size(datatype));
    type = entry_of(datatype);
    return MPI_SUCCESS;
  }
  const Type* tp = nullptr;
  if (int e = check_type(datatype, func, "datatype", comm, &tp)) return e;
  const Entry& t = *static_cast<const Entry*>(tp);
  if (t.size > 0 && n > std::numeric_limits<int64_t>::max() / t.size)
    return fail(MPI_ERR_COUNT, func, comm, "count %lld of datatype %d exceeds the addressable bytes",
                static_cast<long long>(n), datatype);
  type = &t;
  bytes = n * t.size;
  if (t.basic != 0) {
    xtype = t.basic;
    count = n * t.basic_count;
  } else {
    xtype = XMSG_BYTE;
    count = bytes;
  }
  if (t.contiguous || bytes == 0) {
    data = t.contiguous ? mptr(add(addr(buf), t.true_lb)) : buf;
    return MPI_SUCCESS;
  }
  if (allow_packed) {
    packed = true;
    describe(&layout, buf, t);
    data = nullptr;
    return MPI_SUCCESS;
  }
  try {
    owned = staging_buffer(bytes);
  } catch (const std::bad_alloc&) {
    return fail(MPI_ERR_NO_MEM, func, comm, "no memory to receive %lld bytes", static_cast<long long>(bytes));
  }
  // The type outlives a MPI_Type_free the program may call before the receive completes.
  if (!t.predefined) keep = TypePin(&t);
  data = owned.get();
  return MPI_SUCCESS;
}

void RecvView::finish(int64_t received_bytes) {
  if (!owned || !type) return;
  unpack(owned.get(), std::min(received_bytes, bytes), user, user_count, *type);
}

}  // namespace xmsg::mpi

using namespace xmsg::mpi;

namespace {

constexpr const char* kExternal32 = "external32";

int check_datarep(const char* datarep, const char* func) {
  if (!datarep) return fail(MPI_ERR_ARG, func, kTypeComm, "datarep is NULL");
  if (std::strcmp(datarep, kExternal32) != 0)
    return fail(MPI_ERR_ARG, func, kTypeComm, "datarep \"%s\" is not supported (only \"external32\")", datarep);
  return MPI_SUCCESS;
}

int check_pack_comm(MPI_Comm comm, const char* func) {
  int size = 0;
  if (xmsg_comm_size(comm, &size) != XMSG_SUCCESS)
    return fail(MPI_ERR_COMM, func, MPI_COMM_WORLD, "communicator %d is not valid", comm);
  return MPI_SUCCESS;
}

// A new handle for a type of the contents (MPI_Type_get_contents returns new datatypes for
// derived ones): a copy of the layout and decoding, without the attributes.
MPI_Datatype handle_for_contents(const std::shared_ptr<const Entry>& ref) {
  if (ref->predefined) return ref->handle;
  auto copy = std::make_shared<Entry>(*ref);
  copy->attrs.values.clear();
  return add_entry(std::move(copy));
}

int create_vector(int count, int blocklength, MPI_Aint stride_bytes, MPI_Datatype oldtype, MPI_Datatype* newtype,
                  const char* func, int combiner, std::vector<int> ints, std::vector<MPI_Aint> addresses) {
  const Entry* old = nullptr;
  if (int e = check_count(count, func)) return e;
  if (int e = check_blocklength(blocklength, func)) return e;
  if (int e = lookup(oldtype, func, "oldtype", &old)) return e;
  XMSG_CHECK_PTR(newtype, func);
  try {
    std::vector<Piece> pieces;
    pieces.reserve(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) pieces.push_back(Piece{old, static_cast<MPI_Aint>(i) * stride_bytes, blocklength});
    return build_over(oldtype, pieces, combiner, std::move(ints), std::move(addresses), func, newtype);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
}

}  // namespace

extern "C" {

// ---- sizes and bounds ---------------------------------------------------------------------------
int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  XMSG_MPI_ENTRY;
  const Entry* t = nullptr;
  if (int e = lookup(datatype, "MPI_Type_size", "datatype", &t)) return e;
  XMSG_CHECK_PTR(size, "MPI_Type_size");
  *size = t->size > INT_MAX ? MPI_UNDEFINED : static_cast<int>(t->size);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_size)

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  XMSG_MPI_ENTRY;
  const Entry* t = nullptr;
  if (int e = lookup(datatype, "MPI_Type_size_x", "datatype", &t)) return e;
  XMSG_CHECK_PTR(size, "MPI_Type_size_x");
  *size = t->size;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_size_x)

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  XMSG_MPI_ENTRY;
  const Entry* t = nullptr;
  if (int e = lookup(datatype, "MPI_Type_get_extent", "datatype", &t)) return e;
  XMSG_CHECK_PTR(lb, "MPI_Type_get_extent");
  XMSG_CHECK_PTR(extent, "MPI_Type_get_extent");
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_get_extent)

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  XMSG_MPI_ENTRY;
  const Entry* t = nullptr;
  if (int e = lookup(datatype, "MPI_Type_get_extent_x", "datatype", &t)) return e;
  XMSG_CHECK_PTR(lb, "MPI_Type_get_extent_x");
  XMSG_CHECK_PTR(extent, "MPI_Type_get_extent_x");
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_get_extent_x)

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  XMSG_MPI_ENTRY;
  const Entry* t = nullptr;
  if (int e = lookup(datatype, "MPI_Type_get_true_extent", "datatype", &t)) return e;
  XMSG_CHECK_PTR(true_lb, "MPI_Type_get_true_extent");
  XMSG_CHECK_PTR(true_extent, "MPI_Type_get_true_extent");
  *true_lb = t->true_lb;
  *true_extent = t->true_extent;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_get_true_extent)

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  XMSG_MPI_ENTRY;
  const Entry* t = nullptr;
  if (int e = lookup(datatype, "MPI_Type_get_true_extent_x", "datatype", &t)) return e;
  XMSG_CHECK_PTR(true_lb, "MPI_Type_get_true_extent_x");
  XMSG_CHECK_PTR(true_extent, "MPI_Type_get_true_extent_x");
  *true_lb = t->true_lb;
  *true_extent = t->true_extent;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_get_true_extent_x)

// ---- constructors ---------------------------------------------------------------------------
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_contiguous";
  const Entry* old = nullptr;
  if (int e = check_count(count, func)) return e;
  if (int e = lookup(oldtype, func, "oldtype", &old)) return e;
  XMSG_CHECK_PTR(newtype, func);
  try {
    return build_over(oldtype, {Piece{old, 0, count}}, MPI_COMBINER_CONTIGUOUS, {count}, {}, func, newtype);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
}
XMSG_MPI_ALIAS(Type_contiguous)

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const Entry* old = entry_of(oldtype);
  const MPI_Aint stride_bytes = old ? static_cast<MPI_Aint>(stride) * old->extent : 0;
  return create_vector(count, blocklength, stride_bytes, oldtype, newtype, "MPI_Type_vector", MPI_COMBINER_VECTOR,
                       {count, blocklength, stride}, {});
}
XMSG_MPI_ALIAS(Type_vector)

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  return create_vector(count, blocklength, stride, oldtype, newtype, "MPI_Type_create_hvector",
                       MPI_COMBINER_HVECTOR, {count, blocklength}, {stride});
}
XMSG_MPI_ALIAS(Type_create_hvector)

int PMPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_indexed";
  const Entry* old = nullptr;
  if (int e = check_count(count, func)) return e;
  if (count > 0) {
    XMSG_CHECK_PTR(array_of_blocklengths, func);
    XMSG_CHECK_PTR(array_of_displacements, func);
    if (int e = check_blocklengths(count, array_of_blocklengths, func)) return e;
  }
  if (int e = lookup(oldtype, func, "oldtype", &old)) return e;
  XMSG_CHECK_PTR(newtype, func);
  try {
    std::vector<Piece> pieces;
    std::vector<int> ints;
    pieces.reserve(static_cast<size_t>(count));
    ints.reserve(2 * static_cast<size_t>(count) + 1);
    ints.push_back(count);
    for (int i = 0; i < count; ++i) {
      pieces.push_back(Piece{old, static_cast<MPI_Aint>(array_of_displacements[i]) * old->extent,
                             array_of_blocklengths[i]});
      ints.push_back(array_of_blocklengths[i]);
    }
    for (int i = 0; i < count; ++i) ints.push_back(array_of_displacements[i]);
    return build_over(oldtype, pieces, MPI_COMBINER_INDEXED, std::move(ints), {}, func, newtype);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
}
XMSG_MPI_ALIAS(Type_indexed)

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_create_hindexed";
  const Entry* old = nullptr;
  if (int e = check_count(count, func)) return e;
  if (count > 0) {
    XMSG_CHECK_PTR(array_of_blocklengths, func);
    XMSG_CHECK_PTR(array_of_displacements, func);
    if (int e = check_blocklengths(count, array_of_blocklengths, func)) return e;
  }
  if (int e = lookup(oldtype, func, "oldtype", &old)) return e;
  XMSG_CHECK_PTR(newtype, func);
  try {
    std::vector<Piece> pieces;
    std::vector<int> ints{count};
    std::vector<MPI_Aint> addresses;
    for (int i = 0; i < count; ++i) {
      pieces.push_back(Piece{old, array_of_displacements[i], array_of_blocklengths[i]});
      ints.push_back(array_of_blocklengths[i]);
      addresses.push_back(array_of_displacements[i]);
    }
    return build_over(oldtype, pieces, MPI_COMBINER_HINDEXED, std::move(ints), std::move(addresses), func, newtype);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
}
XMSG_MPI_ALIAS(Type_create_hindexed)

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_create_indexed_block";
  const Entry* old = nullptr;
  if (int e = check_count(count, func)) return e;
  if (int e = check_blocklength(blocklength, func)) return e;
  if (count > 0) XMSG_CHECK_PTR(array_of_displacements, func);
  if (int e = lookup(oldtype, func, "oldtype", &old)) return e;
  XMSG_CHECK_PTR(newtype, func);
  try {
    std::vector<Piece> pieces;
    std::vector<int> ints{count, blocklength};
    for (int i = 0; i < count; ++i) {
      pieces.push_back(Piece{old, static_cast<MPI_Aint>(array_of_displacements[i]) * old->extent, blocklength});
      ints.push_back(array_of_displacements[i]);
    }
    return build_over(oldtype, pieces, MPI_COMBINER_INDEXED_BLOCK, std::move(ints), {}, func, newtype);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
}
XMSG_MPI_ALIAS(Type_create_indexed_block)

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_create_hindexed_block";
  const Entry* old = nullptr;
  if (int e = check_count(count, func)) return e;
  if (int e = check_blocklength(blocklength, func)) return e;
  if (count > 0) XMSG_CHECK_PTR(array_of_displacements, func);
  if (int e = lookup(oldtype, func, "oldtype", &old)) return e;
  XMSG_CHECK_PTR(newtype, func);
  try {
    std::vector<Piece> pieces;
    std::vector<MPI_Aint> addresses;
    for (int i = 0; i < count; ++i) {
      pieces.push_back(Piece{old, array_of_displacements[i], blocklength});
      addresses.push_back(array_of_displacements[i]);
    }
    return build_over(oldtype, pieces, MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength}, std::move(addresses), func,
                      newtype);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
}
XMSG_MPI_ALIAS(Type_create_hindexed_block)

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_create_struct";
  if (int e = check_count(count, func)) return e;
  if (count > 0) {
    XMSG_CHECK_PTR(array_of_blocklengths, func);
    XMSG_CHECK_PTR(array_of_displacements, func);
    XMSG_CHECK_PTR(array_of_types, func);
    if (int e = check_blocklengths(count, array_of_blocklengths, func)) return e;
  }
  std::vector<const Entry*> olds(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const Entry* t = entry_of(array_of_types[i]);
    if (!t) {
      if (array_of_types[i] == MPI_DATATYPE_NULL)
        return fail(MPI_ERR_TYPE, func, kTypeComm, "array_of_types[%d] is MPI_DATATYPE_NULL", i);
      return fail(MPI_ERR_TYPE, func, kTypeComm, "array_of_types[%d] = %d is not a valid datatype", i,
                  array_of_types[i]);
    }
    olds[static_cast<size_t>(i)] = t;
  }
  XMSG_CHECK_PTR(newtype, func);
  try {
    std::vector<Piece> pieces;
    std::vector<int> ints{count};
    std::vector<MPI_Aint> addresses;
    std::vector<std::shared_ptr<const Entry>> refs;
    for (int i = 0; i < count; ++i) {
      pieces.push_back(Piece{olds[static_cast<size_t>(i)], array_of_displacements[i], array_of_blocklengths[i]});
      ints.push_back(array_of_blocklengths[i]);
      addresses.push_back(array_of_displacements[i]);
      refs.push_back(ref_of(array_of_types[i]));
    }
    auto e = std::make_shared<Entry>();
    compose(e.get(), pieces, true);
    e->combiner = MPI_COMBINER_STRUCT;
    e->ints = std::move(ints);
    e->addresses = std::move(addresses);
    return publish(std::move(e), std::move(refs), func, newtype);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
}
XMSG_MPI_ALIAS(Type_create_struct)

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_create_resized";
  const Entry* old = nullptr;
  if (int e = lookup(oldtype, func, "oldtype", &old)) return e;
  XMSG_CHECK_PTR(newtype, func);
  try {
    auto e = std::make_shared<Entry>();
    copy_layout(e.get(), *old);
    set_bounds(e.get(), lb, extent);
    e->combiner = MPI_COMBINER_RESIZED;
    e->addresses = {lb, extent};
    return publish(std::move(e), {ref_of(oldtype)}, func, newtype);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
}
XMSG_MPI_ALIAS(Type_create_resized)

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_create_subarray";
  const Entry* old = nullptr;
  if (ndims <= 0) return fail(MPI_ERR_ARG, func, kTypeComm, "ndims %d is not positive", ndims);
  XMSG_CHECK_PTR(array_of_sizes, func);
  XMSG_CHECK_PTR(array_of_subsizes, func);
  XMSG_CHECK_PTR(array_of_starts, func);
  for (int i = 0; i < ndims; ++i) {
    if (array_of_sizes[i] <= 0)
      return fail(MPI_ERR_ARG, func, kTypeComm, "array_of_sizes[%d] = %d is not positive", i, array_of_sizes[i]);
    if (array_of_subsizes[i] < 0 || array_of_subsizes[i] > array_of_sizes[i])
      return fail(MPI_ERR_ARG, func, kTypeComm, "array_of_subsizes[%d] = %d is not in [0, %d]", i,
                  array_of_subsizes[i], array_of_sizes[i]);
    if (array_of_starts[i] < 0 || array_of_starts[i] > array_of_sizes[i] - array_of_subsizes[i])
      return fail(MPI_ERR_ARG, func, kTypeComm, "array_of_starts[%d] = %d is not in [0, %d]", i, array_of_starts[i],
                  array_of_sizes[i] - array_of_subsizes[i]);
  }
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    return fail(MPI_ERR_ARG, func, kTypeComm, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
  if (int e = lookup(oldtype, func, "oldtype", &old)) return e;
  XMSG_CHECK_PTR(newtype, func);
  try {
    std::vector<int64_t> sizes(array_of_sizes, array_of_sizes + ndims);
    std::vector<std::vector<Range>> ranges(static_cast<size_t>(ndims));
    int64_t total = 1;
    for (int i = 0; i < ndims; ++i) {
      total *= array_of_sizes[i];
      if (array_of_subsizes[i] > 0)
        ranges[static_cast<size_t>(i)].push_back(Range{array_of_starts[i], array_of_starts[i] + array_of_subsizes[i]});
    }
    std::vector<Piece> pieces;
    array_pieces(old, sizes, order_dims(ndims, order), ranges, &pieces);
    auto e = std::make_shared<Entry>();
    compose(e.get(), pieces, false);
    set_bounds(e.get(), 0, static_cast<MPI_Aint>(total) * old->extent);
    e->combiner = MPI_COMBINER_SUBARRAY;
    e->ints.push_back(ndims);
    e->ints.insert(e->ints.end(), array_of_sizes, array_of_sizes + ndims);
    e->ints.insert(e->ints.end(), array_of_subsizes, array_of_subsizes + ndims);
    e->ints.insert(e->ints.end(), array_of_starts, array_of_starts + ndims);
    e->ints.push_back(order);
    return publish(std::move(e), {ref_of(oldtype)}, func, newtype);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
}
XMSG_MPI_ALIAS(Type_create_subarray)

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
                            const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_create_darray";
  const Entry* old = nullptr;
  if (size <= 0) return fail(MPI_ERR_ARG, func, kTypeComm, "size %d is not positive", size);
  if (rank < 0 || rank >= size) return fail(MPI_ERR_ARG, func, kTypeComm, "rank %d is not in [0, %d)", rank, size);
  if (ndims <= 0) return fail(MPI_ERR_ARG, func, kTypeComm, "ndims %d is not positive", ndims);
  XMSG_CHECK_PTR(array_of_gsizes, func);
  XMSG_CHECK_PTR(array_of_distribs, func);
  XMSG_CHECK_PTR(array_of_dargs, func);
  XMSG_CHECK_PTR(array_of_psizes, func);
  int64_t nprocs = 1;
  for (int i = 0; i < ndims; ++i) {
    if (array_of_gsizes[i] <= 0)
      return fail(MPI_ERR_ARG, func, kTypeComm, "array_of_gsizes[%d] = %d is not positive", i, array_of_gsizes[i]);
    if (array_of_psizes[i] <= 0)
      return fail(MPI_ERR_ARG, func, kTypeComm, "array_of_psizes[%d] = %d is not positive", i, array_of_psizes[i]);
    const int dist = array_of_distribs[i], darg = array_of_dargs[i];
    if (dist != MPI_DISTRIBUTE_BLOCK && dist != MPI_DISTRIBUTE_CYCLIC && dist != MPI_DISTRIBUTE_NONE)
      return fail(MPI_ERR_ARG, func, kTypeComm, "array_of_distribs[%d] = %d is not a distribution", i, dist);
    if (dist == MPI_DISTRIBUTE_NONE && array_of_psizes[i] != 1)
      return fail(MPI_ERR_ARG, func, kTypeComm,
                  "dimension %d is MPI_DISTRIBUTE_NONE but array_of_psizes[%d] = %d (must be 1)", i, i,
                  array_of_psizes[i]);
    if (dist != MPI_DISTRIBUTE_NONE && darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
      return fail(MPI_ERR_ARG, func, kTypeComm, "array_of_dargs[%d] = %d is not positive", i, darg);
    if (dist == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG &&
        static_cast<int64_t>(darg) * array_of_psizes[i] < array_of_gsizes[i])
      return fail(MPI_ERR_ARG, func, kTypeComm,
                  "array_of_dargs[%d] = %d times array_of_psizes[%d] = %d does not cover array_of_gsizes[%d] = %d", i,
                  darg, i, array_of_psizes[i], i, array_of_gsizes[i]);
    nprocs *= array_of_psizes[i];
  }
  if (nprocs != size)
    return fail(MPI_ERR_ARG, func, kTypeComm, "the process grid has %lld processes, size is %d",
                static_cast<long long>(nprocs), size);
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    return fail(MPI_ERR_ARG, func, kTypeComm, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
  if (int e = lookup(oldtype, func, "oldtype", &old)) return e;
  XMSG_CHECK_PTR(newtype, func);
  try {
    // The process grid is row-major whatever the array order.
    std::vector<int> coords(static_cast<size_t>(ndims));
    int r = rank;
    for (int i = ndims - 1; i >= 0; --i) {
      coords[static_cast<size_t>(i)] = r % array_of_psizes[i];
      r /= array_of_psizes[i];
    }
    std::vector<int64_t> sizes(array_of_gsizes, array_of_gsizes + ndims);
    std::vector<std::vector<Range>> ranges(static_cast<size_t>(ndims));
    int64_t total = 1;
    for (int i = 0; i < ndims; ++i) {
      const int64_t g = array_of_gsizes[i], p = array_of_psizes[i], c = coords[static_cast<size_t>(i)];
      const int darg = array_of_dargs[i];
      auto& out = ranges[static_cast<size_t>(i)];
      total *= g;
      switch (array_of_distribs[i]) {
        case MPI_DISTRIBUTE_NONE: out.push_back(Range{0, g}); break;
        case MPI_DISTRIBUTE_BLOCK: {
          const int64_t b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
          const int64_t begin = c * b, end = std::min(g, begin + b);
          if (begin < end) out.push_back(Range{begin, end});
          break;
        }
        default: {  // cyclic(k)
          const int64_t k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
          for (int64_t begin = c * k; begin < g; begin += p * k) out.push_back(Range{begin, std::min(g, begin + k)});
          break;
        }
      }
    }
    std::vector<Piece> pieces;
    array_pieces(old, sizes, order_dims(ndims, order), ranges, &pieces);
    auto e = std::make_shared<Entry>();
    compose(e.get(), pieces, false);
    set_bounds(e.get(), 0, static_cast<MPI_Aint>(total) * old->extent);
    e->combiner = MPI_COMBINER_DARRAY;
    e->ints = {size, rank, ndims};
    e->ints.insert(e->ints.end(), array_of_gsizes, array_of_gsizes + ndims);
    e->ints.insert(e->ints.end(), array_of_distribs, array_of_distribs + ndims);
    e->ints.insert(e->ints.end(), array_of_dargs, array_of_dargs + ndims);
    e->ints.insert(e->ints.end(), array_of_psizes, array_of_psizes + ndims);
    e->ints.push_back(order);
    return publish(std::move(e), {ref_of(oldtype)}, func, newtype);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
}
XMSG_MPI_ALIAS(Type_create_darray)

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_dup";
  const Entry* old = nullptr;
  if (int e = lookup(oldtype, func, "oldtype", &old)) return e;
  XMSG_CHECK_PTR(newtype, func);
  MPI_Datatype h = MPI_DATATYPE_NULL;
  try {
    auto e = std::make_shared<Entry>();
    copy_layout(e.get(), *old);
    finalize(e.get());
    e->committed = old->committed;
    e->combiner = MPI_COMBINER_DUP;
    if (int rc = publish(std::move(e), {ref_of(oldtype)}, func, &h)) return rc;
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
  Entry* created = const_cast<Entry*>(entry_of(h));
  int rc = copy_attributes(AttrKind::kType, oldtype, old->attrs, &created->attrs);
  if (rc != MPI_SUCCESS) {
    delete_attributes(AttrKind::kType, h, &created->attrs);
    table().entries[static_cast<size_t>(h)].reset();
    return fail(rc, func, kTypeComm, "an attribute copy callback of datatype %d failed (code %d)", oldtype, rc);
  }
  *newtype = h;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_dup)

int PMPI_Type_commit(MPI_Datatype* datatype) {
  XMSG_MPI_ENTRY;
  XMSG_CHECK_PTR(datatype, "MPI_Type_commit");
  const Entry* t = nullptr;
  if (int e = lookup(*datatype, "MPI_Type_commit", "datatype", &t)) return e;
  const_cast<Entry*>(t)->committed = true;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_commit)

int PMPI_Type_free(MPI_Datatype* datatype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_free";
  XMSG_CHECK_PTR(datatype, func);
  const Entry* t = nullptr;
  if (int e = lookup(*datatype, func, "datatype", &t)) return e;
  if (t->predefined)
    return fail(MPI_ERR_TYPE, func, kTypeComm, "%s is a predefined datatype and cannot be freed", t->name.c_str());
  const MPI_Datatype h = *datatype;
  std::shared_ptr<Entry> keep = table().entries[static_cast<size_t>(h)];
  int rc = delete_attributes(AttrKind::kType, h, &keep->attrs);
  drop_handle(h);
  *datatype = MPI_DATATYPE_NULL;
  if (rc != MPI_SUCCESS)
    return fail(rc, func, kTypeComm, "an attribute delete callback of datatype %d failed (code %d)", h, rc);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_free)

// ---- decoding ---------------------------------------------------------------------------------
int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes,
                           int* combiner) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_get_envelope";
  const Entry* t = nullptr;
  if (int e = lookup(datatype, func, "datatype", &t)) return e;
  XMSG_CHECK_PTR(num_integers, func);
  XMSG_CHECK_PTR(num_addresses, func);
  XMSG_CHECK_PTR(num_datatypes, func);
  XMSG_CHECK_PTR(combiner, func);
  *combiner = t->combiner;
  *num_integers = static_cast<int>(t->ints.size());
  *num_addresses = static_cast<int>(t->addresses.size());
  *num_datatypes = static_cast<int>(t->refs.size());
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_get_envelope)

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int array_of_integers[], MPI_Aint array_of_addresses[],
                           MPI_Datatype array_of_datatypes[]) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_get_contents";
  const Entry* t = nullptr;
  if (int e = lookup(datatype, func, "datatype", &t)) return e;
  if (t->combiner == MPI_COMBINER_NAMED)
    return fail(MPI_ERR_TYPE, func, kTypeComm, "datatype %s is predefined (MPI_COMBINER_NAMED has no contents)",
                t->name.c_str());
  const int ni = static_cast<int>(t->ints.size()), na = static_cast<int>(t->addresses.size()),
            nd = static_cast<int>(t->refs.size());
  if (max_integers < ni)
    return fail(MPI_ERR_ARG, func, kTypeComm, "max_integers %d is less than %d", max_integers, ni);
  if (max_addresses < na)
    return fail(MPI_ERR_ARG, func, kTypeComm, "max_addresses %d is less than %d", max_addresses, na);
  if (max_datatypes < nd)
    return fail(MPI_ERR_ARG, func, kTypeComm, "max_datatypes %d is less than %d", max_datatypes, nd);
  if (ni > 0) XMSG_CHECK_PTR(array_of_integers, func);
  if (na > 0) XMSG_CHECK_PTR(array_of_addresses, func);
  if (nd > 0) XMSG_CHECK_PTR(array_of_datatypes, func);
  std::copy(t->ints.begin(), t->ints.end(), array_of_integers);
  std::copy(t->addresses.begin(), t->addresses.end(), array_of_addresses);
  // Copy the references first: creating handles may grow the table t lives in (t stays valid,
  // entries are shared pointers, but keep the loop independent of it).
  std::vector<std::shared_ptr<const Entry>> refs = t->refs;
  try {
    for (int i = 0; i < nd; ++i) array_of_datatypes[i] = handle_for_contents(refs[static_cast<size_t>(i)]);
  } catch (const std::bad_alloc&) {
    return no_memory(func);
  }
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_get_contents)

int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  XMSG_MPI_ENTRY;
  const Entry* t = nullptr;
  if (int e = lookup(datatype, "MPI_Type_set_name", "datatype", &t)) return e;
  XMSG_CHECK_PTR(type_name, "MPI_Type_set_name");
  std::string name(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  const_cast<Entry*>(t)->name = std::move(name);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_set_name)

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  XMSG_MPI_ENTRY;
  const Entry* t = nullptr;
  if (int e = lookup(datatype, "MPI_Type_get_name", "datatype", &t)) return e;
  XMSG_CHECK_PTR(type_name, "MPI_Type_get_name");
  XMSG_CHECK_PTR(resultlen, "MPI_Type_get_name");
  const size_t n = std::min<size_t>(t->name.size(), MPI_MAX_OBJECT_NAME - 1);
  std::memcpy(type_name, t->name.data(), n);
  type_name[n] = '\0';
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Type_get_name)

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Type_match_size";
  XMSG_CHECK_PTR(datatype, func);
  static const MPI_Datatype reals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
  static const MPI_Datatype integers[] = {MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG};
  static const MPI_Datatype complexes[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX};
  const MPI_Datatype* list = nullptr;
  size_t n = 0;
  const char* name = "";
  switch (typeclass) {
    case MPI_TYPECLASS_REAL: list = reals; n = std::size(reals); name = "MPI_TYPECLASS_REAL"; break;
    case MPI_TYPECLASS_INTEGER: list = integers; n = std::size(integers); name = "MPI_TYPECLASS_INTEGER"; break;
    case MPI_TYPECLASS_COMPLEX: list = complexes; n = std::size(complexes); name = "MPI_TYPECLASS_COMPLEX"; break;
    default: return fail(MPI_ERR_ARG, func, kTypeComm, "typeclass %d is not a type class", typeclass);
  }
  for (size_t i = 0; i < n; ++i) {
    if (entry_of(list[i])->size == size) {
      *datatype = list[i];
      return MPI_SUCCESS;
    }
  }
  return fail(MPI_ERR_ARG, func, kTypeComm, "no %s datatype has size %d", name, size);
}
XMSG_MPI_ALIAS(Type_match_size)

// ---- addresses ----------------------------------------------------------------------------------
int PMPI_Get_address(const void* location, MPI_Aint* address) {
  XMSG_MPI_ENTRY;
  XMSG_CHECK_PTR(address, "MPI_Get_address");
  *address = static_cast<MPI_Aint>(reinterpret_cast<uintptr_t>(location));
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Get_address)

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  XMSG_MPI_ENTRY;
  return static_cast<MPI_Aint>(static_cast<uintptr_t>(base) + static_cast<uintptr_t>(disp));
}
XMSG_MPI_ALIAS(Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  XMSG_MPI_ENTRY;
  return static_cast<MPI_Aint>(static_cast<uintptr_t>(addr1) - static_cast<uintptr_t>(addr2));
}
XMSG_MPI_ALIAS(Aint_diff)

// ---- pack / unpack ----------------------------------------------------------------------------
int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
              MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Pack";
  const Entry* t = nullptr;
  if (int e = check_count(incount, func, "incount")) return e;
  if (int e = lookup_committed(datatype, func, "datatype", &t)) return e;
  if (int e = check_pack_comm(comm, func)) return e;
  XMSG_CHECK_PTR(position, func);
  if (*position < 0) return fail(MPI_ERR_ARG, func, comm, "position %d is negative", *position);
  const int64_t bytes = static_cast<int64_t>(incount) * t->size;
  if (bytes > static_cast<int64_t>(outsize) - *position)
    return fail(MPI_ERR_TRUNCATE, func, comm, "%lld bytes do not fit at position %d of a %d-byte buffer",
                static_cast<long long>(bytes), *position, outsize);
  if (bytes > 0) {
    XMSG_CHECK_PTR(outbuf, func);
    pack_elements(addr(inbuf), incount, *t, static_cast<char*>(outbuf) + *position);
  }
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Pack)

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Unpack";
  const Entry* t = nullptr;
  if (int e = check_count(outcount, func, "outcount")) return e;
  if (int e = lookup_committed(datatype, func, "datatype", &t)) return e;
  if (int e = check_pack_comm(comm, func)) return e;
  XMSG_CHECK_PTR(position, func);
  if (*position < 0) return fail(MPI_ERR_ARG, func, comm, "position %d is negative", *position);
  const int64_t bytes = static_cast<int64_t>(outcount) * t->size;
  if (bytes > static_cast<int64_t>(insize) - *position)
    return fail(MPI_ERR_TRUNCATE, func, comm, "%lld bytes to unpack but %lld left after position %d of %d",
                static_cast<long long>(bytes), static_cast<long long>(insize) - *position, *position, insize);
  if (bytes > 0) {
    XMSG_CHECK_PTR(inbuf, func);
    unpack_elements(static_cast<const char*>(inbuf) + *position, addr(outbuf), outcount, *t);
  }
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Unpack)

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Pack_size";
  const Entry* t = nullptr;
  if (int e = check_count(incount, func, "incount")) return e;
  if (int e = lookup(datatype, func, "datatype", &t)) return e;
  if (int e = check_pack_comm(comm, func)) return e;
  XMSG_CHECK_PTR(size, func);
  const int64_t bytes = static_cast<int64_t>(incount) * t->size;
  if (bytes > INT_MAX)
    return fail(MPI_ERR_COUNT, func, comm, "%lld bytes exceed an int", static_cast<long long>(bytes));
  *size = static_cast<int>(bytes);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Pack_size)

int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                       MPI_Aint outsize, MPI_Aint* position) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Pack_external";
  const Entry* t = nullptr;
  if (int e = check_datarep(datarep, func)) return e;
  if (int e = check_count(incount, func, "incount")) return e;
  if (int e = lookup_committed(datatype, func, "datatype", &t)) return e;
  XMSG_CHECK_PTR(position, func);
  if (*position < 0)
    return fail(MPI_ERR_ARG, func, kTypeComm, "position %lld is negative", static_cast<long long>(*position));
  const int64_t bytes = static_cast<int64_t>(incount) * t->ext_size;
  if (bytes > outsize - *position)
    return fail(MPI_ERR_TRUNCATE, func, kTypeComm, "%lld bytes do not fit at position %lld of a %lld-byte buffer",
                static_cast<long long>(bytes), static_cast<long long>(*position), static_cast<long long>(outsize));
  if (bytes > 0) {
    XMSG_CHECK_PTR(outbuf, func);
    pack_external(addr(inbuf), incount, *t, static_cast<char*>(outbuf) + *position);
  }
  *position += static_cast<MPI_Aint>(bytes);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Pack_external)

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                         int outcount, MPI_Datatype datatype) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Unpack_external";
  const Entry* t = nullptr;
  if (int e = check_datarep(datarep, func)) return e;
  if (int e = check_count(outcount, func, "outcount")) return e;
  if (int e = lookup_committed(datatype, func, "datatype", &t)) return e;
  XMSG_CHECK_PTR(position, func);
  if (*position < 0)
    return fail(MPI_ERR_ARG, func, kTypeComm, "position %lld is negative", static_cast<long long>(*position));
  const int64_t bytes = static_cast<int64_t>(outcount) * t->ext_size;
  if (bytes > insize - *position)
    return fail(MPI_ERR_TRUNCATE, func, kTypeComm, "%lld bytes to unpack but %lld left after position %lld",
                static_cast<long long>(bytes), static_cast<long long>(insize - *position),
                static_cast<long long>(*position));
  if (bytes > 0) {
    XMSG_CHECK_PTR(inbuf, func);
    unpack_external(static_cast<const char*>(inbuf) + *position, addr(outbuf), outcount, *t);
  }
  *position += static_cast<MPI_Aint>(bytes);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Unpack_external)

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Pack_external_size";
  const Entry* t = nullptr;
  if (int e = check_datarep(datarep, func)) return e;
  if (int e = check_count(incount, func, "incount")) return e;
  if (int e = lookup(datatype, func, "datatype", &t)) return e;
  XMSG_CHECK_PTR(size, func);
  *size = static_cast<MPI_Aint>(incount) * t->ext_size;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Pack_external_size)

// ---- statuses -----------------------------------------------------------------------------------
int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Get_count";
  XMSG_CHECK_PTR(status, func);
  const Entry* t = nullptr;
  if (int e = lookup(datatype, func, "datatype", &t)) return e;
  XMSG_CHECK_PTR(count, func);
  const int64_t wire = wire_size(datatype, *t), bytes = status->xmsg_bytes;
  if (wire == 0) {
    *count = 0;
  } else if (bytes % wire != 0 || bytes / wire > INT_MAX) {
    *count = MPI_UNDEFINED;
  } else {
    *count = static_cast<int>(bytes / wire);
  }
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Get_count)

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Get_elements_x";
  XMSG_CHECK_PTR(status, func);
  const Entry* t = nullptr;
  if (int e = lookup(datatype, func, "datatype", &t)) return e;
  XMSG_CHECK_PTR(count, func);
  const int64_t n = elements_in(datatype, *t, status->xmsg_bytes);
  *count = n < 0 ? MPI_UNDEFINED : n;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Get_elements_x)

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Get_elements";
  XMSG_CHECK_PTR(status, func);
  const Entry* t = nullptr;
  if (int e = lookup(datatype, func, "datatype", &t)) return e;
  XMSG_CHECK_PTR(count, func);
  const int64_t n = elements_in(datatype, *t, status->xmsg_bytes);
  *count = n < 0 || n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Get_elements)

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Status_set_elements_x";
  XMSG_CHECK_PTR(status, func);
  const Entry* t = nullptr;
  if (int e = lookup(datatype, func, "datatype", &t)) return e;
  if (count < 0) return fail(MPI_ERR_COUNT, func, kTypeComm, "count %lld is negative", static_cast<long long>(count));
  status->xmsg_bytes = bytes_of_elements(datatype, *t, count);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Status_set_elements_x)

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  XMSG_MPI_ENTRY;
  const char* func = "MPI_Status_set_elements";
  XMSG_CHECK_PTR(status, func);
  const Entry* t = nullptr;
  if (int e = lookup(datatype, func, "datatype", &t)) return e;
  if (count < 0) return fail(MPI_ERR_COUNT, func, kTypeComm, "count %d is negative", count);
  status->xmsg_bytes = bytes_of_elements(datatype, *t, count);
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Status_set_elements)

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  XMSG_MPI_ENTRY;
  XMSG_CHECK_PTR(status, "MPI_Status_set_cancelled");
  status->xmsg_cancelled = flag ? 1 : 0;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Status_set_cancelled)

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  XMSG_MPI_ENTRY;
  XMSG_CHECK_PTR(status, "MPI_Test_cancelled");
  XMSG_CHECK_PTR(flag, "MPI_Test_cancelled");
  *flag = status->xmsg_cancelled ? 1 : 0;
  return MPI_SUCCESS;
}
XMSG_MPI_ALIAS(Test_cancelled)

}  // extern "C"
