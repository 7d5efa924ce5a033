// xmsg_info: what this installation can do on this node (like ompi_info, ucx_info -d, fi_info).
//   1. version and build configuration (from CMake, see tools/CMakeLists.txt);
//   2. the transports built in and whether each is usable here, with why not when not;
//   3. the node's topology as hwloc sees it, and where each RDMA device sits in it;
//   4. the XMSG_* variables set in the environment;
//   5. every declared parameter (bootstrap's table) with its value and where it came from, and
//      the XMSG_* variables no table declares.
// Text by default, --json for one JSON object with the same content (docs/xmsg_info.md).
//
// The verbs verdict is the transport's own: xmsg::verbs::Device::open / open_default (the same
// device choice, port choice and GID checks), and the mode rule of VerbsTransport's choose_mode.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <xmsg/bootstrap/parameters.hpp>

#include <arpa/inet.h>
#include <hwloc.h>
#include <hwloc/openfabrics-verbs.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "human_bytes.hpp"
#include "Device.hpp"

extern char** environ;

#ifndef XMSG_INFO_VERSION
#define XMSG_INFO_VERSION "unknown"
#endif
#ifndef XMSG_INFO_BUILD_TYPE
#define XMSG_INFO_BUILD_TYPE ""
#endif
#ifndef XMSG_INFO_COMPILER
#define XMSG_INFO_COMPILER "unknown"
#endif
#ifndef XMSG_INFO_TRANSPORTS
#define XMSG_INFO_TRANSPORTS ""
#endif
#ifndef XMSG_INFO_PMIX_VERSION
#define XMSG_INFO_PMIX_VERSION ""
#endif
#ifndef XMSG_INFO_HWLOC_VERSION
#define XMSG_INFO_HWLOC_VERSION ""
#endif
#ifndef XMSG_INFO_IBVERBS_VERSION
#define XMSG_INFO_IBVERBS_VERSION ""
#endif
#ifndef XMSG_INFO_RDMACM_VERSION
#define XMSG_INFO_RDMACM_VERSION ""
#endif
#ifndef XMSG_INFO_SANITIZE
#define XMSG_INFO_SANITIZE ""
#endif
#ifndef XMSG_INFO_TESTS
#define XMSG_INFO_TESTS "OFF"
#endif
#ifndef XMSG_INFO_BENCHMARKS
#define XMSG_INFO_BENCHMARKS "OFF"
#endif

namespace {

constexpr int kUsageError = 2;

using nlohmann::json;

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t next = text.find(sep, pos);
    if (next == std::string_view::npos) next = text.size();
    if (next > pos) out.emplace_back(text.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

bool on(std::string_view v) { return v == "1" || v == "ON" || v == "TRUE"; }


std::string human_bytes(double bytes) { return xmsg::tools::human_bytes(bytes, 1); }

std::string joined(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

// ---- 1. version and build configuration -----------------------------------------------------

json build_info(const std::vector<std::string>& built) {
  return {
      {"build_type", XMSG_INFO_BUILD_TYPE},
      {"compiler", XMSG_INFO_COMPILER},
      {"transports", built},
      {"sanitizer", XMSG_INFO_SANITIZE},
      {"tests", on(XMSG_INFO_TESTS)},
      {"benchmarks", on(XMSG_INFO_BENCHMARKS)},
      {"libraries",
       {{"pmix", XMSG_INFO_PMIX_VERSION},
        {"hwloc", XMSG_INFO_HWLOC_VERSION},
        {"libibverbs", XMSG_INFO_IBVERBS_VERSION},
        {"librdmacm", XMSG_INFO_RDMACM_VERSION}}},
  };
}

// ---- 2a. shm ----------------------------------------------------------------------------------

// Single copy (CMA, process_vm_readv) between two ranks of one node: they are siblings (children
// of the launcher), neither an ancestor of the other. A child reading its parent is refused in
// the same cases siblings are (Yama ptrace_scope >= 1, a seccomp filter, no ptrace
// permission), so that is the probe: fork, read one word of the parent, report errno.
volatile std::uint64_t cma_probe_word = 0x786d7367;  // "xmsg"

std::pair<bool, std::string> probe_cma() {
  try {
    if (!xmsg::params::flag("XMSG_SHM_CMA"))
      return {false, "disabled by XMSG_SHM_CMA=" + xmsg::params::raw("XMSG_SHM_CMA").value_or("")};
  } catch (const xmsg::params::ParameterError& e) {
    return {false, e.what()};
  }
  std::fflush(nullptr);
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) return {false, fmt::format("cannot fork to probe it: {}", std::strerror(errno))};
  if (child == 0) {
    std::uint64_t value = 0;
    iovec local{&value, sizeof value};
    iovec remote{const_cast<std::uint64_t*>(&cma_probe_word), sizeof value};
    const ssize_t n = process_vm_readv(parent, &local, 1, &remote, 1, 0);
    _exit(n == static_cast<ssize_t>(sizeof value) && value == cma_probe_word ? 0 : (n < 0 ? (errno & 0x7f) : 0x7f));
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return {false, "the probe process died"};
  const int code = WEXITSTATUS(status);
  if (code == 0) return {true, ""};
  std::string why = code == 0x7f
                        ? std::string("process_vm_readv read nothing")
                        : fmt::format("process_vm_readv between processes of this user: {}", std::strerror(code));
  std::ifstream scope("/proc/sys/kernel/yama/ptrace_scope");
  int level = -1;
  if (scope >> level && level >= 1) why += fmt::format(" (Yama ptrace_scope is {})", level);
  return {false, why + "; large messages take the two-copy path"};
}

json shm_info(bool built) {
  json j = {{"built", built}, {"usable", false}, {"reason", ""}};
  if (!built) {
    j["reason"] = "not built into this installation";
    return j;
  }
  // Segments are POSIX shared-memory objects, /dev/shm/xmsg-<job>-<suffix> (transport/shm).
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) != 0) {
    j["reason"] = fmt::format("/dev/shm: {}", std::strerror(errno));
    return j;
  }
  j["dev_shm_free_bytes"] = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (access("/dev/shm", W_OK | X_OK) != 0) {
    j["reason"] = fmt::format("/dev/shm is not writable: {}", std::strerror(errno));
  } else {
    j["usable"] = true;
  }
  const auto [cma, why] = probe_cma();
  j["cma"] = {{"usable", cma}, {"reason", why}};
  return j;
}

// ---- 2b. tcp ----------------------------------------------------------------------------------

struct Interface {
  std::string name;
  std::string address;
  bool up = false;
  bool loopback = false;
};

std::vector<Interface> ipv4_interfaces(std::string& error) {
  std::vector<Interface> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    error = fmt::format("getifaddrs: {}", std::strerror(errno));
    return out;
  }
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    out.push_back({i->ifa_name, text, (i->ifa_flags & IFF_UP) != 0, (i->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(list);
  return out;
}

// The address the tcp transport listens on and publishes (transport/tcp/src/TcpConfig.cpp,
// choose_listen_address): XMSG_TCP_IF as an IPv4 address or an interface name, otherwise the
// first non-loopback interface that is up, otherwise 127.0.0.1.
json tcp_info(bool built) {
  json j = {{"built", built}, {"usable", false}, {"reason", ""}};
  if (!built) {
    j["reason"] = "not built into this installation";
    return j;
  }
  std::string error;
  const auto all = ipv4_interfaces(error);
  json interfaces = json::array();
  for (const auto& i : all) {
    if (!i.loopback) interfaces.push_back({{"name", i.name}, {"address", i.address}, {"up", i.up}});
  }
  j["interfaces"] = interfaces;
  const std::string choice = xmsg::params::text("XMSG_TCP_IF");
  in_addr probe{};
  std::string listen, why_listen;
  if (!choice.empty() && inet_pton(AF_INET, choice.c_str(), &probe) == 1) {
    listen = choice;
    why_listen = "XMSG_TCP_IF";
  } else {
    for (const auto& i : all) {
      if (choice.empty() ? (i.up && !i.loopback) : i.name == choice) {
        listen = i.address;
        why_listen = choice.empty() ? "first non-loopback interface that is up: " + i.name : "XMSG_TCP_IF=" + choice;
        break;
      }
    }
    if (listen.empty() && !choice.empty()) {
      j["reason"] = fmt::format("XMSG_TCP_IF='{}': no such interface with an IPv4 address{}", choice,
                                error.empty() ? "" : " (" + error + ")");
      return j;
    }
    if (listen.empty()) {
      listen = "127.0.0.1";
      why_listen = "no non-loopback interface is up: reaches ranks of this node only";
    }
  }
  j["usable"] = true;
  j["listen_address"] = listen;
  j["listen_reason"] = why_listen;
  return j;
}

// ---- 2c. verbs and 3. device locality ---------------------------------------------------------

std::string link_layer_name(std::uint8_t layer) {
  switch (layer) {
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    default:
      return "unspecified";
  }
}

// As ibv_devinfo prints them, without its PORT_ prefix.
std::string port_state_name(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_NOP:
      return "NOP";
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
  }
  return fmt::format("state {}", static_cast<int>(state));
}

std::string guid_text(__be64 guid) {
  const std::uint64_t g = be64toh(guid);
  return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", (g >> 48) & 0xffff, (g >> 32) & 0xffff, (g >> 16) & 0xffff,
                     g & 0xffff);
}

std::string bitmap_list(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr) return "";
  std::string out(text);
  std::free(text);
  return out;
}

std::vector<int> bitmap_indexes(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) out.push_back(i);
  return out;
}

// Where an RDMA device sits: the NUMA node(s) of its nearest non-I/O ancestor in hwloc's I/O
// tree (PCI), else the device's local_cpus from sysfs when narrower than the machine, else
// unknown (a software device such as rxe has no PCI parent and no local_cpus).
json device_locality(hwloc_topology_t topology, ibv_device* device) {
  json j = {{"device", ibv_get_device_name(device)}, {"numa_nodes", json::array()}, {"cpuset", ""},
            {"source", "unknown"}, {"reason", ""}};
  if (topology == nullptr) {
    j["reason"] = "no hwloc topology";
    return j;
  }
  hwloc_obj_t osdev = hwloc_ibv_get_device_osdev(topology, device);
  if (osdev != nullptr) {
    for (hwloc_obj_t p = osdev->parent; p != nullptr; p = p->parent) {
      if (p->type == HWLOC_OBJ_PCI_DEVICE) {
        const auto& pci = p->attr->pcidev;
        j["pci"] = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.domain, pci.bus, pci.dev, pci.func);
        break;
      }
    }
    hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, osdev);
    if (ancestor != nullptr && ancestor->cpuset != nullptr && ancestor->nodeset != nullptr) {
      j["numa_nodes"] = bitmap_indexes(ancestor->nodeset);
      j["cpuset"] = bitmap_list(ancestor->cpuset);
      j["source"] = "hwloc I/O";
      if (ancestor->parent == nullptr && hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE) > 1) {
        j["reason"] = "attached to the whole machine, no single nearest NUMA node";
      }
      return j;
    }
  }
  hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
  hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
  if (hwloc_ibv_get_device_cpuset(topology, device, cpus) == 0 && !hwloc_bitmap_iszero(cpus) &&
      !hwloc_bitmap_isequal(cpus, hwloc_topology_get_complete_cpuset(topology))) {
    hwloc_cpuset_to_nodeset(topology, cpus, nodes);
    j["numa_nodes"] = bitmap_indexes(nodes);
    j["cpuset"] = bitmap_list(cpus);
    j["source"] = "sysfs local_cpus";
  } else {
    j["reason"] = osdev == nullptr ? "hwloc's I/O discovery finds no PCI device for it (a software device?)"
                                   : "hwloc knows no CPUs near it";
  }
  hwloc_bitmap_free(nodes);
  hwloc_bitmap_free(cpus);
  return j;
}

// VerbsTransport's choose_mode (transport/verbs/VerbsTransport.cpp), without its throw.
std::pair<std::string, std::string> verbs_mode(const xmsg::verbs::Device& device) {
  std::string wanted;
  try {
    wanted = xmsg::params::choice("XMSG_VERBS_MODE");
  } catch (const xmsg::params::ParameterError& e) {
    return {"", e.what()};
  }
  if (wanted == "auto") return {device.supports_xrc() ? "xrc" : "rc", ""};
  if (wanted == "rc") return {"rc", ""};
  if (wanted == "xrc") {
    if (device.supports_xrc()) return {"xrc", ""};
    return {"", "XMSG_VERBS_MODE=xrc but " + device.label() + " lacks IBV_DEVICE_XRC (use rc or auto)"};
  }
  return {"", "XMSG_VERBS_MODE='" + wanted + "': not auto, xrc or rc"};
}

json verbs_info(bool built, hwloc_topology_t topology, json& localities) {
  json j = {{"built", built}, {"usable", false}, {"reason", ""}, {"devices", json::array()}};
  if (!built) {
    j["reason"] = "not built into this installation";
    return j;
  }
  int count = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr || count == 0) {
    const int err = errno;
    j["reason"] = list == nullptr && err != 0
                      ? fmt::format("no RDMA device (ibv_get_device_list: {})", std::strerror(err))
                      : std::string("no RDMA device");
    if (list != nullptr) ibv_free_device_list(list);
    return j;
  }
  for (int d = 0; d < count; ++d) {
    ibv_device* dev = list[d];
    const std::string name = ibv_get_device_name(dev);
    json dj = {{"name", name}, {"usable", false}, {"reason", ""}, {"xrc", false}, {"ports", json::array()}};
    localities.push_back(device_locality(topology, dev));
    ibv_context* context = ibv_open_device(dev);
    if (context == nullptr) {
      dj["reason"] = fmt::format("ibv_open_device: {}", std::strerror(errno));
      j["devices"].push_back(dj);
      continue;
    }
    ibv_device_attr attr{};
    if (int rc = ibv_query_device(context, &attr); rc != 0) {
      dj["reason"] = fmt::format("ibv_query_device: {}", std::strerror(rc));
    } else {
      dj["xrc"] = (attr.device_cap_flags & IBV_DEVICE_XRC) != 0;
      dj["fw_ver"] = attr.fw_ver;
      dj["node_guid"] = guid_text(attr.node_guid);
      dj["device_cap_flags"] = fmt::format("0x{:08x}", attr.device_cap_flags);
      for (int p = 1; p <= attr.phys_port_cnt; ++p) {
        ibv_port_attr pa{};
        if (int rc = ibv_query_port(context, static_cast<std::uint8_t>(p), &pa); rc != 0) {
          dj["ports"].push_back(
              {{"port", p}, {"state", fmt::format("unknown (ibv_query_port: {})", std::strerror(rc))}});
          continue;
        }
        dj["ports"].push_back({{"port", p},
                               {"state", port_state_name(pa.state)},
                               {"link_layer", link_layer_name(pa.link_layer)},
                               {"active_mtu", xmsg::verbs::mtu_bytes(pa.active_mtu)},
                               {"lid", pa.lid}});
      }
    }
    ibv_close_device(context);
    // The transport's own verdict: first ACTIVE port (or XMSG_IB_DEVICE's), LID or RoCE v2 GID.
    if (dj["reason"] == "") {
      try {
        const auto device = xmsg::verbs::Device::open(xmsg::verbs::DeviceSpec{name, std::nullopt});
        dj["usable"] = true;
        dj["port"] = device.address().port;
        dj["gid_index"] = device.address().gid_index;
      } catch (const std::exception& e) {
        dj["reason"] = e.what();
      }
    }
    j["devices"].push_back(dj);
  }
  ibv_free_device_list(list);

  // The device a rank would open (XMSG_IB_DEVICE, else nearest first) and the mode it would run.
  try {
    const auto device = xmsg::verbs::Device::open_default();
    const auto [mode, why] = verbs_mode(device);
    j["selected"] = device.label();
    if (mode.empty()) {
      j["reason"] = why;
    } else {
      j["usable"] = true;
      j["mode"] = mode;
    }
  } catch (const std::exception& e) {
    j["reason"] = e.what();
  }
  return j;
}

// ---- 3. topology ------------------------------------------------------------------------------

struct Topology {
  hwloc_topology_t handle = nullptr;
  std::string error;
  Topology() {
    if (hwloc_topology_init(&handle) != 0) {
      error = fmt::format("hwloc_topology_init: {}", std::strerror(errno));
      handle = nullptr;
      return;
    }
    // PCI bridges and devices with their OS devices (the RDMA devices' places). On Linux hwloc's
    // own sysfs code finds them; its "pci" component (libpciaccess) adds only vendor names and
    // leaks its pci.ids table, which LeakSanitizer builds report: leave it out.
    hwloc_topology_set_io_types_filter(handle, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
#if HWLOC_API_VERSION >= 0x00020100
    hwloc_topology_set_components(handle, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
#endif
    if (hwloc_topology_load(handle) != 0) {
      error = fmt::format("hwloc_topology_load: {}", std::strerror(errno));
      hwloc_topology_destroy(handle);
      handle = nullptr;
    }
  }
  ~Topology() {
    if (handle != nullptr) hwloc_topology_destroy(handle);
  }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
};

json topology_info(const Topology& topo) {
  json j = {{"packages", 0}, {"numa_nodes", 0}, {"cores", 0}, {"pus", 0}, {"bound_pus", 0}, {"reason", topo.error}};
  if (topo.handle == nullptr) return j;
  auto count = [&](hwloc_obj_type_t type) { return std::max(0, hwloc_get_nbobjs_by_type(topo.handle, type)); };
  j["packages"] = count(HWLOC_OBJ_PACKAGE);
  j["numa_nodes"] = count(HWLOC_OBJ_NUMANODE);
  j["cores"] = count(HWLOC_OBJ_CORE);
  j["pus"] = count(HWLOC_OBJ_PU);
  hwloc_bitmap_t bound = hwloc_bitmap_alloc();
  if (hwloc_get_cpubind(topo.handle, bound, HWLOC_CPUBIND_PROCESS) == 0) {
    j["bound_pus"] = std::max(0, hwloc_bitmap_weight(bound));
    j["bound_cpuset"] = bitmap_list(bound);
  }
  hwloc_bitmap_free(bound);
  return j;
}

// ---- 4. environment ---------------------------------------------------------------------------

json environment_info() {
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.rfind("XMSG_", 0) != 0) continue;
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    vars.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  std::sort(vars.begin(), vars.end());
  json j = json::object();
  for (const auto& [name, value] : vars) j[name] = value;
  return j;
}

// ---- 5. parameters (bootstrap/src/parameter_table.cpp) ---------------------------------------

json parameters_info() {
  namespace params = xmsg::params;
  json declared = json::array();
  for (const params::Parameter& p : params::table()) {
    json j = {{"name", p.name},
              {"layer", params::to_string(p.layer)},
              {"type", params::to_string(p.type)},
              {"default", p.default_value},
              {"accepts", params::accepted(p)},
              {"doc", p.doc},
              {"source", params::source(p.name)},
              {"value", nullptr}};
    if (auto value = params::raw(p.name)) {
      j["value"] = *value;
      try {
        params::check_value(p, *value);
      } catch (const params::ParameterError& e) {
        j["error"] = e.what();
      }
    }
    declared.push_back(std::move(j));
  }
  json unknown = json::array();
  for (const auto& u : params::unknown_variables(environ))
    unknown.push_back({{"name", u.name}, {"nearest", u.nearest}, {"message", params::describe(u)}});
  return {{"declared", std::move(declared)}, {"unknown", std::move(unknown)}};
}

// The rows of one layer's parameter table in docs/ (between `<!-- parameters:LAYER -->`
// markers); the contract test docs_parameters compares every page with this.
int print_parameters_markdown(const std::string& layer) {
  namespace params = xmsg::params;
  bool any = false;
  fmt::print("| Variable | Default | Accepts | Meaning |\n|---|---|---|---|\n");
  for (const params::Parameter& p : params::table()) {
    if (params::to_string(p.layer) != layer) continue;
    any = true;
    fmt::print("| `{}` | {} | {} | {} |\n", p.name, p.default_value.empty() ? "unset" : fmt::format("`{}`", p.default_value),
               params::accepted(p), p.doc);
  }
  if (!any) {
    std::fprintf(stderr, "xmsg_info: --parameters-markdown: no parameter of layer '%s'\n", layer.c_str());
    return kUsageError;
  }
  return 0;
}

void print_parameters(const json& parameters, bool with_docs) {
  fmt::print("parameters (XMSG_*: value, and where it came from)\n");
  std::string layer;
  for (const auto& p : parameters.at("declared")) {
    if (p.at("layer") != layer) {
      layer = p.at("layer");
      fmt::print("  [{}]\n", layer);
    }
    const bool set = !p.at("value").is_null();
    const std::string fallback = p.at("default").get<std::string>();
    const std::string value = set ? p.at("value").get<std::string>() : fallback.empty() ? "(unset)" : fallback;
    fmt::print("    {}={}{}{}\n", p.at("name").get<std::string>(), value, set ? "  (environment)" : "",
               p.contains("error") ? "  ERROR: " + p.at("error").get<std::string>() : "");
    if (with_docs)
      fmt::print("        {}; {}\n", p.at("doc").get<std::string>(), p.at("accepts").get<std::string>());
  }
  for (const auto& u : parameters.at("unknown")) fmt::print("  warning: {}\n", u.at("message").get<std::string>());
}

// ---- text output ------------------------------------------------------------------------------

std::string verdict(const json& t) {
  if (t.at("usable").get<bool>()) return "usable";
  return "not usable: " + t.at("reason").get<std::string>();
}

void print_text(const json& info) {
  const auto& b = info.at("build");
  const auto& libs = b.at("libraries");
  fmt::print("xmsg {} on {}\n", info.at("version").get<std::string>(), info.at("host").get<std::string>());
  fmt::print("version\n");
  fmt::print("  xmsg          : {}\n", info.at("version").get<std::string>());
  const std::string type = b.at("build_type");
  fmt::print("  build type    : {}\n", type.empty() ? "(none)" : type);
  fmt::print("  compiler      : {}\n", b.at("compiler").get<std::string>());
  const std::string sanitizer = b.at("sanitizer");
  fmt::print("  sanitizer     : {}\n", sanitizer.empty() ? "none" : sanitizer);
  fmt::print("  transports    : {}\n", joined(b.at("transports").get<std::vector<std::string>>(), " "));
  fmt::print("  PMIx          : {}\n", libs.at("pmix").get<std::string>());
  fmt::print("  hwloc         : {}\n", libs.at("hwloc").get<std::string>());
  fmt::print("  rdma-core     : libibverbs {}, librdmacm {}\n", libs.at("libibverbs").get<std::string>(),
             libs.at("librdmacm").get<std::string>());
  fmt::print("  tests         : {}, benchmarks: {}\n", b.at("tests").get<bool>() ? "built" : "not built",
             b.at("benchmarks").get<bool>() ? "built" : "not built");

  const auto& t = info.at("transports");
  fmt::print("transports\n");
  {
    const auto& shm = t.at("shm");
    std::string line = verdict(shm);
    if (shm.contains("dev_shm_free_bytes")) {
      line += fmt::format(" (/dev/shm: {} free)", human_bytes(shm.at("dev_shm_free_bytes").get<double>()));
    }
    fmt::print("  shm   : {}\n", line);
    if (shm.contains("cma")) {
      const auto& cma = shm.at("cma");
      fmt::print("          single copy (CMA): {}\n",
                 cma.at("usable").get<bool>() ? "usable" : "not usable: " + cma.at("reason").get<std::string>());
    }
  }
  {
    const auto& tcp = t.at("tcp");
    std::string line = verdict(tcp);
    if (tcp.contains("listen_address")) {
      line += fmt::format(", listens on {} ({})", tcp.at("listen_address").get<std::string>(),
                          tcp.at("listen_reason").get<std::string>());
    }
    fmt::print("  tcp   : {}\n", line);
    if (tcp.contains("interfaces")) {
      std::vector<std::string> items;
      for (const auto& i : tcp.at("interfaces")) {
        items.push_back(fmt::format("{} {}{}", i.at("name").get<std::string>(), i.at("address").get<std::string>(),
                                    i.at("up").get<bool>() ? "" : " (down)"));
      }
      fmt::print("          IPv4 interfaces (non-loopback): {}\n", items.empty() ? "none" : joined(items, ", "));
    }
  }
  {
    const auto& verbs = t.at("verbs");
    std::string line = verdict(verbs);
    if (verbs.contains("mode")) {
      line += fmt::format(", a rank opens {}, mode {}", verbs.at("selected").get<std::string>(),
                          verbs.at("mode").get<std::string>());
    }
    fmt::print("  verbs : {}\n", line);
    for (const auto& d : verbs.at("devices")) {
      const std::string name = d.at("name");
      std::string head = d.at("usable").get<bool>() ? fmt::format("usable on port {}", d.at("port").get<int>())
                                                    : "not usable: " + d.at("reason").get<std::string>();
      if (d.contains("fw_ver")) {
        head += d.at("xrc").get<bool>() ? ", has XRC" : fmt::format("; {} lacks XRC (IBV_DEVICE_XRC)", name);
      }
      fmt::print("          {}: {}\n", name, head);
      for (const auto& p : d.at("ports")) {
        if (!p.contains("link_layer")) {
          fmt::print("            port {}: {}\n", p.at("port").get<int>(), p.at("state").get<std::string>());
          continue;
        }
        fmt::print("            port {}: {}, {}, active MTU {}{}\n", p.at("port").get<int>(),
                   p.at("state").get<std::string>(), p.at("link_layer").get<std::string>(),
                   p.at("active_mtu").get<int>(),
                   p.at("link_layer") == "InfiniBand" ? fmt::format(", LID {}", p.at("lid").get<int>()) : "");
      }
    }
  }

  const auto& topo = info.at("topology");
  fmt::print("topology (hwloc)\n");
  if (!topo.at("reason").get<std::string>().empty()) {
    fmt::print("  unknown: {}\n", topo.at("reason").get<std::string>());
  } else {
    fmt::print("  packages {}, NUMA nodes {}, cores {}, PUs {} ({} this process may run on)\n",
               topo.at("packages").get<int>(), topo.at("numa_nodes").get<int>(), topo.at("cores").get<int>(),
               topo.at("pus").get<int>(), topo.at("bound_pus").get<int>());
  }
  for (const auto& r : topo.at("rdma_devices")) {
    const std::string name = r.at("device");
    if (r.at("source") == "unknown") {
      fmt::print("  {}: locality unknown: {}\n", name, r.at("reason").get<std::string>());
      continue;
    }
    std::vector<std::string> nodes;
    for (const auto& n : r.at("numa_nodes")) nodes.push_back(std::to_string(n.get<int>()));
    fmt::print("  {}: NUMA node {}, CPUs {}{} (from {}){}\n", name, nodes.empty() ? "?" : joined(nodes, ","),
               r.at("cpuset").get<std::string>(), r.contains("pci") ? ", PCI " + r.at("pci").get<std::string>() : "",
               r.at("source").get<std::string>(),
               r.at("reason").get<std::string>().empty() ? "" : "; " + r.at("reason").get<std::string>());
  }

  fmt::print("environment (XMSG_* set)\n");
  const auto& env = info.at("environment");
  if (env.empty()) fmt::print("  (none)\n");
  for (const auto& [name, value] : env.items()) fmt::print("  {}={}\n", name, value.get<std::string>());

  print_parameters(info.at("parameters"), false);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xmsg_info: what this xmsg installation can do on this node (version, transports, topology, "
               "XMSG_* environment)"};
  bool as_json = false;
  bool only_parameters = false;
  std::string markdown_layer;
  app.add_flag("--json", as_json, "print one JSON object");
  app.add_flag("--parameters", only_parameters,
               "print only the parameters, each with its meaning and what it accepts (with --json: only them)");
  app.add_option("--parameters-markdown", markdown_layer,
                 "print one layer's parameter table as Markdown, as docs/ holds it (runtime, collectives, shm, tcp, "
                 "verbs, launcher)");
  app.set_version_flag("--version", std::string("xmsg ") + XMSG_INFO_VERSION);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "xmsg_info: %s\n", e.what());
    return kUsageError;
  }

  if (!markdown_layer.empty()) return print_parameters_markdown(markdown_layer);
  if (only_parameters) {
    const json parameters = parameters_info();
    if (as_json) {
      std::puts(parameters.dump(2).c_str());
    } else {
      print_parameters(parameters, true);
    }
    return 0;
  }

  try {
    const auto built = split(XMSG_INFO_TRANSPORTS, ',');
    auto is_built = [&](const char* t) { return std::find(built.begin(), built.end(), t) != built.end(); };
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");

    json info;
    info["version"] = XMSG_INFO_VERSION;
    info["host"] = host;
    info["build"] = build_info(built);
    // shm first: its CMA probe forks, best done before libraries start threads.
    json transports;
    transports["shm"] = shm_info(is_built("shm"));
    transports["tcp"] = tcp_info(is_built("tcp"));
    const Topology topology;
    json localities = json::array();
    transports["verbs"] = verbs_info(is_built("verbs"), topology.handle, localities);
    info["transports"] = transports;
    info["topology"] = topology_info(topology);
    info["topology"]["rdma_devices"] = localities;
    info["environment"] = environment_info();
    info["parameters"] = parameters_info();

    if (as_json) {
      std::puts(info.dump(2).c_str());
    } else {
      print_text(info);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xmsg_info: %s\n", e.what());
    return 1;
  }
  return 0;
}
