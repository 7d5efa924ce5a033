// Every XMSG_* environment variable of every layer, declared once (parameter_table.cpp) and
// read through one parser, like UCX's ucs_config_field_t tables and libfabric's fi_param_define.
//
// Why in bootstrap/: the environment is, with PMIx, what a process learns from its job, and the
// table is the contract between the launcher, which sets some variables (XMSG_JOB_TMPDIR), and
// the ranks that read them. This part has no dependency at all (no PMIx, no tool library), so
// the launcher and the tools link it without reaching into the rest of the bootstrap layer.
//
// Rules, the same for every variable:
//   * unset or empty: the table's default;
//   * flag: 1, 0, on, off, yes, no, true, false (any case);
//   * integer: decimal, within the declared range;
//   * bytes: decimal with an optional K, M, G or T suffix (powers of 1024), within the range;
//   * choice: one of the declared words;
//   * anything else is a ParameterError whose message names the variable, the value and what it
//     accepts.
// An XMSG_* variable no table declares is reported (rank 0, once per job) with the nearest
// declared name; names under XMSG_TEST_ are reserved for test harnesses and not reported.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace xmsg::params {

enum class Type : std::uint8_t { Flag, Integer, Bytes, Choice, Text };

// The layer that reads the variable (where its documentation lives, docs/<layer page>).
enum class Layer : std::uint8_t { Runtime, Collectives, Shm, Tcp, Verbs, Launcher, Tools };

struct Parameter {
  std::string_view name;
  Type type;
  Layer layer;
  // As a user would write it; empty: unset by default (the reader decides, `doc` says how).
  std::string_view default_value;
  std::int64_t min = 0;  // Integer, Bytes
  std::int64_t max = 0;
  std::string_view choices;  // Choice: words separated by '|'
  std::string_view unit;     // Integer: what one unit is ("us", "ms", "s", "ranks", ...)
  std::string_view doc;      // one line
};

class ParameterError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

std::span<const Parameter> table();
// nullptr when no table declares `name`.
const Parameter* find(std::string_view name);

std::string_view to_string(Type type);
std::string_view to_string(Layer layer);
// What a value of `p` may be, in words: "bytes 64K..1G (an optional K, M, G or T suffix)".
std::string accepted(const Parameter& p);

// The raw value from the environment; nullopt when unset or empty.
std::optional<std::string> raw(std::string_view name);
// "environment" or "default".
std::string_view source(std::string_view name);

// Typed readers: the environment's value, else the table's default, parsed by the rules above.
// Throw ParameterError on a malformed value, std::logic_error for a name no table declares or a
// reader of the wrong type (a programming error, caught by the table's self-test).
bool flag(std::string_view name);
std::int64_t integer(std::string_view name);  // Integer and Bytes
std::string choice(std::string_view name);
std::string text(std::string_view name);
// Variables without a default: nullopt when unset (the reader decides, e.g. by detection).
std::optional<bool> flag_if_set(std::string_view name);
std::optional<std::int64_t> integer_if_set(std::string_view name);

// Parses `value` as `p` would (the default itself included); throws ParameterError.
void check_value(const Parameter& p, std::string_view value);
// Every declared variable that is set, checked; the first malformed one throws ParameterError.
void check_environment();

struct UnknownVariable {
  std::string name;
  std::string nearest;  // empty when no declared name is close
};
// XMSG_* names in `environment` (NAME=value entries, e.g. environ) that no table declares.
std::vector<UnknownVariable> unknown_variables(char** environment);
// One line for `u`: "XMSG_TRANSPORT is not an xmsg parameter (did you mean XMSG_TRANSPORTS?)".
std::string describe(const UnknownVariable& u);

}  // namespace xmsg::params
