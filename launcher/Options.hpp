// Command line of xmsgrun, parsed into plain data so it can be unit-tested without launching.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace xmsg::launcher {

enum class BindTo { Auto, Core, Numa, None };

struct Options {
  int nranks = 0;
  int nnodes = 1;
  BindTo bind_to = BindTo::Auto;
  bool report_bindings = false;
  bool tag_output = false;
  bool netns = false;  // each virtual node in its own network namespace
  // -x: variables exported to every rank, already resolved to name/value.
  std::vector<std::pair<std::string, std::string>> exports;
  double timeout_seconds = 0;  // 0 = no timeout
  // Where the timeout came from, for the message when it strikes: "--timeout", or
  // "MPIEXEC_TIMEOUT" (the environment variable mpiexec honours, used when --timeout is absent).
  std::string timeout_from;
  // --stats FILE: at the end of the job, write what crossed between the node servers (fence
  // contributions, direct modex) and when the first fence completed, as JSON (docs/launcher.md).
  std::string stats_path;  // empty = no statistics file
  std::string program_path;    // resolved, executable
  std::vector<std::string> argv;  // argv[0] as the user wrote it, then the program's arguments
};

struct ParseOutcome {
  enum class Kind { Run, Help, Error };
  Kind kind = Kind::Error;
  Options options;
  std::string message;  // Help: the usage text; Error: what was wrong (plus usage where useful)
};

// Looks up an environment variable; injectable so tests do not depend on the real environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup real_environment();

// Parses xmsgrun's arguments. Parsing of options stops at the program name: everything after
// it belongs to the program. Never exits and never prints.
ParseOutcome parse_options(const std::vector<std::string>& args, const EnvLookup& env);

// Finds `program` the way execvp would (PATH search when it has no '/'). Returns the path, or
// an error message naming the program in `error`.
std::optional<std::string> resolve_program(const std::string& program, const std::string& path_env,
                                           std::string& error);

const char* bind_to_name(BindTo b);

}  // namespace xmsg::launcher
