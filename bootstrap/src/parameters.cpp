// The one parser of XMSG_* variables (rules in parameters.hpp).
#include <xmsg/bootstrap/parameters.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace xmsg::params {
namespace {

constexpr std::string_view kReservedForTests = "XMSG_TEST_";

std::string quoted(std::string_view name, std::string_view value) {
  return std::string(name) + "='" + std::string(value) + "'";
}

[[noreturn]] void malformed(const Parameter& p, std::string_view value) {
  throw ParameterError(quoted(p.name, value) + ": expected " + accepted(p));
}

const Parameter& declared(std::string_view name, Type type) {
  const Parameter* p = find(name);
  if (p == nullptr) throw std::logic_error("no parameter table declares " + std::string(name));
  const bool compatible = p->type == type || (type == Type::Integer && p->type == Type::Bytes);
  if (!compatible)
    throw std::logic_error(std::string(name) + " is a " + std::string(to_string(p->type)) + ", read as a " +
                           std::string(to_string(type)));
  return *p;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<bool> parse_flag(std::string_view text) {
  const std::string v = lower(text);
  if (v == "1" || v == "on" || v == "yes" || v == "true") return true;
  if (v == "0" || v == "off" || v == "no" || v == "false") return false;
  return std::nullopt;
}

// Decimal, then (Bytes) one optional K/M/G/T; nullopt on anything else or overflow.
std::optional<std::int64_t> parse_number(std::string_view text, bool with_suffix) {
  if (text.empty()) return std::nullopt;
  std::int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end == first) return std::nullopt;
  if (end == last) return value;
  if (!with_suffix || end + 1 != last) return std::nullopt;
  int shift = 0;
  switch (*end) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: return std::nullopt;
  }
  if (value < 0 || value > (std::numeric_limits<std::int64_t>::max() >> shift)) return std::nullopt;
  return value << shift;
}

std::string bytes_text(std::int64_t n) {
  static constexpr const char* kSuffix[] = {"", "K", "M", "G", "T"};
  int i = 0;
  while (i < 4 && n != 0 && n % 1024 == 0) {
    n /= 1024;
    ++i;
  }
  return std::to_string(n) + kSuffix[i];
}

bool one_of(std::string_view choices, std::string_view value) {
  std::size_t pos = 0;
  while (pos <= choices.size()) {
    std::size_t bar = choices.find('|', pos);
    if (bar == std::string_view::npos) bar = choices.size();
    if (choices.substr(pos, bar - pos) == value) return true;
    pos = bar + 1;
  }
  return false;
}

std::int64_t parse_in_range(const Parameter& p, std::string_view value) {
  auto n = parse_number(value, p.type == Type::Bytes);
  if (!n || *n < p.min || *n > p.max) malformed(p, value);
  return *n;
}

// Damerau-Levenshtein (optimal string alignment) distance, for "did you mean".
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

const Parameter* find(std::string_view name) {
  for (const Parameter& p : table())
    if (p.name == name) return &p;
  return nullptr;
}

std::string_view to_string(Type type) {
  switch (type) {
    case Type::Flag: return "flag";
    case Type::Integer: return "integer";
    case Type::Bytes: return "bytes";
    case Type::Choice: return "choice";
    case Type::Text: return "text";
  }
  return "?";
}

std::string_view to_string(Layer layer) {
  switch (layer) {
    case Layer::Runtime: return "runtime";
    case Layer::Collectives: return "collectives";
    case Layer::Shm: return "shm";
    case Layer::Tcp: return "tcp";
    case Layer::Verbs: return "verbs";
    case Layer::Launcher: return "launcher";
    case Layer::Tools: return "tools";
  }
  return "?";
}

std::string accepted(const Parameter& p) {
  switch (p.type) {
    case Type::Flag: return "a flag: 1, 0, on, off, yes, no, true or false";
    case Type::Integer: {
      std::string unit = p.unit.empty() ? std::string() : " (" + std::string(p.unit) + ")";
      return "an integer in " + std::to_string(p.min) + ".." + std::to_string(p.max) + unit;
    }
    case Type::Bytes:
      return "bytes in " + bytes_text(p.min) + ".." + bytes_text(p.max) + " (an optional K, M, G or T suffix)";
    case Type::Choice: {
      std::string words(p.choices);
      std::replace(words.begin(), words.end(), '|', ',');
      return "one of " + words;
    }
    case Type::Text: return "any text";
  }
  return "?";
}

std::optional<std::string> raw(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::string_view source(std::string_view name) { return raw(name) ? "environment" : "default"; }

void check_value(const Parameter& p, std::string_view value) {
  switch (p.type) {
    case Type::Flag:
      if (!parse_flag(value)) malformed(p, value);
      return;
    case Type::Integer:
    case Type::Bytes: parse_in_range(p, value); return;
    case Type::Choice:
      if (!one_of(p.choices, value)) malformed(p, value);
      return;
    case Type::Text: return;
  }
}

bool flag(std::string_view name) {
  const Parameter& p = declared(name, Type::Flag);
  const std::string value = raw(name).value_or(std::string(p.default_value));
  if (value.empty()) throw std::logic_error(std::string(name) + " has no default: read it with flag_if_set");
  auto f = parse_flag(value);
  if (!f) malformed(p, value);
  return *f;
}

std::optional<bool> flag_if_set(std::string_view name) {
  const Parameter& p = declared(name, Type::Flag);
  const auto value = raw(name);
  if (!value) return p.default_value.empty() ? std::nullopt : std::optional<bool>(flag(name));
  auto f = parse_flag(*value);
  if (!f) malformed(p, *value);
  return f;
}

std::int64_t integer(std::string_view name) {
  const Parameter& p = declared(name, Type::Integer);
  const std::string value = raw(name).value_or(std::string(p.default_value));
  if (value.empty()) throw std::logic_error(std::string(name) + " has no default: read it with integer_if_set");
  return parse_in_range(p, value);
}

std::optional<std::int64_t> integer_if_set(std::string_view name) {
  const Parameter& p = declared(name, Type::Integer);
  const auto value = raw(name);
  if (!value) return p.default_value.empty() ? std::nullopt : std::optional<std::int64_t>(integer(name));
  return parse_in_range(p, *value);
}

std::string choice(std::string_view name) {
  const Parameter& p = declared(name, Type::Choice);
  const std::string value = raw(name).value_or(std::string(p.default_value));
  if (!one_of(p.choices, value)) malformed(p, value);
  return value;
}

std::string text(std::string_view name) {
  const Parameter& p = declared(name, Type::Text);
  return raw(name).value_or(std::string(p.default_value));
}

void check_environment() {
  for (const Parameter& p : table())
    if (auto value = raw(p.name)) check_value(p, *value);
}

std::vector<UnknownVariable> unknown_variables(char** environment) {
  std::vector<UnknownVariable> out;
  if (environment == nullptr) return out;
  for (char** e = environment; *e != nullptr; ++e) {
    std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (!name.starts_with("XMSG_") || name.starts_with(kReservedForTests) || find(name) != nullptr) continue;
    UnknownVariable u{std::string(name), {}};
    std::size_t best = std::max<std::size_t>(2, name.size() / 5) + 1;
    for (const Parameter& p : table()) {
      const std::size_t d = distance(name, p.name);
      if (d < best) {
        best = d;
        u.nearest = std::string(p.name);
      }
    }
    out.push_back(std::move(u));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::string describe(const UnknownVariable& u) {
  std::string line = u.name + " is not an xmsg parameter";
  if (!u.nearest.empty()) line += " (did you mean " + u.nearest + "?)";
  return line + "; `xmsg_info --parameters` lists them";
}

}  // namespace xmsg::params
