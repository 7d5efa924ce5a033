#include "Options.hpp"

#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace xmsg::launcher {

const char* bind_to_name(BindTo b) {
  switch (b) {
    case BindTo::Auto: return "auto";
    case BindTo::Core: return "core";
    case BindTo::Numa: return "numa";
    case BindTo::None: return "none";
  }
  return "?";
}

EnvLookup real_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

std::optional<std::string> resolve_program(const std::string& program, const std::string& path_env,
                                           std::string& error) {
  auto check = [&](const std::string& path, bool report) -> bool {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (report) error = "program '" + program + "' not found";
      return false;
    }
    if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) {
      if (report) error = "program '" + program + "' is not an executable file";
      return false;
    }
    return true;
  };
  if (program.empty()) {
    error = "empty program name";
    return std::nullopt;
  }
  if (program.find('/') != std::string::npos) {
    if (check(program, true)) return program;
    return std::nullopt;
  }
  std::string first_non_exec;
  std::stringstream dirs(path_env);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) != 0) continue;
    if (check(candidate, false)) return candidate;
    if (first_non_exec.empty()) first_non_exec = candidate;
  }
  if (!first_non_exec.empty())
    error = "program '" + program + "' (" + first_non_exec + ") is not an executable file";
  else
    error = "program '" + program + "' not found in PATH";
  return std::nullopt;
}

namespace {

// MPIEXEC_TIMEOUT: decimal digits only (no sign, space or unit), 1 to kMaxEnvTimeout.
constexpr long long kMaxEnvTimeout = 2147483647;  // about 68 years
std::optional<long long> parse_timeout_env(const std::string& v) {
  if (v.empty() || v.size() > 10) return std::nullopt;
  long long x = 0;
  for (char ch : v) {
    if (ch < '0' || ch > '9') return std::nullopt;
    x = x * 10 + (ch - '0');
  }
  if (x < 1 || x > kMaxEnvTimeout) return std::nullopt;
  return x;
}

ParseOutcome error_outcome(std::string message) {
  ParseOutcome out;
  out.kind = ParseOutcome::Kind::Error;
  out.message = std::move(message);
  return out;
}

}  // namespace

ParseOutcome parse_options(const std::vector<std::string>& args, const EnvLookup& env) {
  CLI::App app{"xmsgrun: launch an xmsg (PMIx) job on this machine", "xmsgrun"};
  // The program and its arguments are not ours: stop at the first positional argument.
  app.prefix_command();
  app.footer("Usage: xmsgrun -n N [options] program [args...]   (options stop at the program name)");

  Options o;
  std::string bind = "auto";
  std::vector<std::string> exports;
  auto* n_opt = app.add_option("-n,--np", o.nranks, "Number of ranks to start (>= 1)");
  auto* nodes_opt =
      app.add_option("--nodes", o.nnodes, "Virtual nodes: ranks are split block-wise into K nodes, "
                                          "each served by its own PMIx server (default 1)");
  app.add_option("--bind-to", bind,
                 "Bind ranks to a core, a NUMA node, or not at all "
                 "(default: core, round-robin also when ranks outnumber cores)")
      ->check(CLI::IsMember({"core", "numa", "none"}));
  app.add_flag("--report-bindings", o.report_bindings, "Print each rank's binding");
  app.add_flag("--tag-output", o.tag_output, "Prefix every output line with [rank]");
  app.add_flag("--netns", o.netns,
               "Give each virtual node its own network namespace, joined by a private bridge "
               "(needs root)");
  app.add_option("-x", exports, "Export VAR (from this environment) or VAR=value to every rank")
      ->allow_extra_args(false);
  auto* timeout_opt = app.add_option("--timeout", o.timeout_seconds,
                                     "End the job (exit 124) after SECONDS; without it, MPIEXEC_TIMEOUT "
                                     "(whole seconds) from the environment");
  auto* stats_opt = app.add_option("--stats", o.stats_path,
                                   "At the end of the job write per-node statistics (fence and "
                                   "direct-modex bytes, counts, start-up time) as JSON to FILE");

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    ParseOutcome out;
    out.kind = ParseOutcome::Kind::Help;
    out.message = app.help();
    return out;
  } catch (const CLI::ParseError& e) {
    return error_outcome(std::string(e.what()) + "\n" + app.help());
  }

  std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
  if (!rest.empty() && !rest.front().empty() && rest.front()[0] == '-')
    return error_outcome("unknown option '" + rest.front() + "'\n" + app.help());
  if (n_opt->count() == 0) return error_outcome("-n N is required\n" + app.help());
  if (o.nranks < 1) return error_outcome("-n must be >= 1, got " + std::to_string(o.nranks));
  if (nodes_opt->count() && o.nnodes < 1)
    return error_outcome("--nodes must be >= 1, got " + std::to_string(o.nnodes));
  if (o.nnodes > o.nranks)
    return error_outcome("--nodes " + std::to_string(o.nnodes) + " is more than -n " +
                         std::to_string(o.nranks) + ": every node needs a rank");
  if (timeout_opt->count()) {
    if (!(o.timeout_seconds > 0)) return error_outcome("--timeout must be > 0 seconds");
    o.timeout_from = "--timeout";
  } else if (auto v = env("MPIEXEC_TIMEOUT"); v && !v->empty()) {
    // As under mpiexec (MPICH, Open MPI): a whole number of seconds; --timeout wins over it.
    auto seconds = parse_timeout_env(*v);
    if (!seconds)
      return error_outcome("MPIEXEC_TIMEOUT='" + *v + "' is not a positive whole number of seconds (1 to " +
                           std::to_string(kMaxEnvTimeout) + "); unset it or use --timeout SECONDS");
    o.timeout_seconds = static_cast<double>(*seconds);
    o.timeout_from = "MPIEXEC_TIMEOUT";
  }
  if (stats_opt->count() && o.stats_path.empty())
    return error_outcome("--stats needs a file name");
  if (bind == "core") o.bind_to = BindTo::Core;
  if (bind == "numa") o.bind_to = BindTo::Numa;
  if (bind == "none") o.bind_to = BindTo::None;

  for (const auto& x : exports) {
    auto eq = x.find('=');
    std::string name = x.substr(0, eq);
    if (name.empty()) return error_outcome("-x '" + x + "': empty variable name");
    if (eq != std::string::npos) {
      o.exports.emplace_back(name, x.substr(eq + 1));
    } else {
      auto v = env(name);
      if (!v) return error_outcome("-x " + name + ": " + name + " is not set in the environment");
      o.exports.emplace_back(name, *v);
    }
  }

  if (rest.empty()) return error_outcome("no program given\n" + app.help());
  std::string error;
  auto path = resolve_program(rest.front(), env("PATH").value_or("/usr/local/bin:/usr/bin:/bin"),
                              error);
  if (!path) return error_outcome(error);
  o.program_path = *path;
  o.argv = rest;

  ParseOutcome out;
  out.kind = ParseOutcome::Kind::Run;
  out.options = std::move(o);
  return out;
}

}  // namespace xmsg::launcher
