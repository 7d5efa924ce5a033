#include "Device.hpp"

#include <xmsg/bootstrap/parameters.hpp>

#include <hwloc.h>
#include <hwloc/openfabrics-verbs.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "VerbsError.hpp"

namespace xmsg::verbs {

namespace {

struct DeviceList {
  ibv_device** devices = nullptr;
  int count = 0;
  DeviceList() { devices = ibv_get_device_list(&count); }
  ~DeviceList() {
    if (devices != nullptr) ibv_free_device_list(devices);
  }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
  ibv_device* find(std::string_view name) const {
    for (int i = 0; i < count; ++i) {
      if (name == ibv_get_device_name(devices[i])) return devices[i];
    }
    return nullptr;
  }
};

std::string joined_names() {
  std::string out;
  for (const auto& n : list_device_names()) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// Devices ordered nearest-first to the CPUs this process may run on. hwloc failures only
// lose the ordering, never the devices.
std::vector<ibv_device*> nearest_first(const DeviceList& list) {
  std::vector<ibv_device*> near, far;
  // Loading the topology costs far more than opening a device; with one device there is no
  // choice to make.
  if (list.count == 1) return {list.devices[0]};
  hwloc_topology_t topology = nullptr;
  hwloc_bitmap_t binding = hwloc_bitmap_alloc();
  hwloc_bitmap_t device_set = hwloc_bitmap_alloc();
  bool usable = hwloc_topology_init(&topology) == 0;
  usable = usable && hwloc_topology_load(topology) == 0;
  usable = usable && hwloc_get_cpubind(topology, binding, HWLOC_CPUBIND_PROCESS) == 0;
  for (int i = 0; i < list.count; ++i) {
    bool is_near = false;
    if (usable && hwloc_ibv_get_device_cpuset(topology, list.devices[i], device_set) == 0) {
      is_near = hwloc_bitmap_intersects(binding, device_set) != 0;
    }
    (is_near ? near : far).push_back(list.devices[i]);
  }
  hwloc_bitmap_free(device_set);
  hwloc_bitmap_free(binding);
  if (topology != nullptr) hwloc_topology_destroy(topology);
  near.insert(near.end(), far.begin(), far.end());
  return near;
}

bool is_ipv4_mapped(const std::uint8_t* raw) {
  for (int i = 0; i < 10; ++i) {
    if (raw[i] != 0) return false;
  }
  return raw[10] == 0xff && raw[11] == 0xff;
}

std::optional<int> gid_index_override() {
  if (auto index = params::integer_if_set("XMSG_IB_GID_INDEX")) return static_cast<int>(*index);
  return std::nullopt;
}

}  // namespace

DeviceSpec parse_device_spec(std::string_view text, std::string_view variable) {
  const std::string var(variable);
  DeviceSpec spec;
  const auto colon = text.find(':');
  spec.name = std::string(text.substr(0, colon));
  if (spec.name.empty()) throw std::invalid_argument(var + ": expected name[:port], got '" + std::string(text) + "'");
  if (colon != std::string_view::npos) {
    const auto port_text = text.substr(colon + 1);
    int port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 255) {
      throw std::invalid_argument(var + ": port must be a number 1..255, got '" + std::string(port_text) + "'");
    }
    spec.port = port;
  }
  return spec;
}

std::vector<std::string> list_device_names() {
  DeviceList list;
  std::vector<std::string> names;
  for (int i = 0; i < list.count; ++i) names.emplace_back(ibv_get_device_name(list.devices[i]));
  return names;
}

int mtu_bytes(ibv_mtu mtu) { return 128 << static_cast<int>(mtu); }

Device Device::open_default() {
  if (const auto spec = params::raw("XMSG_IB_DEVICE")) {
    return open(parse_device_spec(*spec));
  }
  DeviceList list;
  if (list.count == 0) throw VerbsError("no RDMA device found (ibv_get_device_list is empty)");
  std::string failures;
  for (ibv_device* dev : nearest_first(list)) {
    try {
      return open(DeviceSpec{ibv_get_device_name(dev), std::nullopt});
    } catch (const VerbsError& e) {
      failures += std::string(failures.empty() ? "" : "; ") + e.what();
    }
  }
  throw VerbsError("no usable RDMA device: " + failures);
}

Device Device::open(const DeviceSpec& spec) {
  DeviceList list;
  ibv_device* dev = list.find(spec.name);
  if (dev == nullptr) {
    throw VerbsError("RDMA device '" + spec.name + "' not found (available: " + joined_names() + ")");
  }
  ibv_context* context = ibv_open_device(dev);
  if (context == nullptr) throw_verbs_error("ibv_open_device", spec.name, errno);
  return Device(context, spec.name, spec.port.value_or(0));
}

Device::Device(ibv_context* context, std::string name, int port) : context_(context), name_(std::move(name)) {
  try {
    if (int rc = ibv_query_device(context_, &attr_); rc != 0) throw_verbs_error("ibv_query_device", name_, rc);
    if (port == 0) {
      std::string states;
      for (int p = 1; p <= attr_.phys_port_cnt; ++p) {
        ibv_port_attr pa{};
        if (ibv_query_port(context_, static_cast<std::uint8_t>(p), &pa) != 0) continue;
        if (pa.state == IBV_PORT_ACTIVE) {
          port = p;
          break;
        }
        states += std::string(states.empty() ? "" : ", ") + "port " + std::to_string(p) + ": " + ibv_port_state_str(pa.state);
      }
      if (port == 0) throw VerbsError("RDMA device " + name_ + " has no ACTIVE port (" + states + ")");
    }
    if (port > attr_.phys_port_cnt) {
      throw VerbsError("RDMA device " + name_ + " has no port " + std::to_string(port) + " (it has " +
                       std::to_string(attr_.phys_port_cnt) + ")");
    }
    query_port(port);
  } catch (...) {
    ibv_close_device(context_);
    throw;
  }
}

void Device::query_port(int port) {
  ibv_port_attr pa{};
  if (int rc = ibv_query_port(context_, static_cast<std::uint8_t>(port), &pa); rc != 0) {
    throw_verbs_error("ibv_query_port " + std::to_string(port), name_, rc);
  }
  if (pa.state != IBV_PORT_ACTIVE) {
    throw VerbsError("port " + std::to_string(port) + " of RDMA device " + name_ + " is " +
                     ibv_port_state_str(pa.state) + ", not ACTIVE");
  }
  address_.port = static_cast<std::uint8_t>(port);
  address_.link_layer = pa.link_layer;
  address_.lid = pa.lid;
  address_.path_mtu = pa.active_mtu;

  std::optional<int> chosen = gid_index_override();
  if (!chosen && address_.is_roce()) {
    std::vector<ibv_gid_entry> table(static_cast<std::size_t>(pa.gid_tbl_len > 0 ? pa.gid_tbl_len : 1));
    const ssize_t n = ibv_query_gid_table(context_, table.data(), table.size(), 0);
    if (n < 0) throw_verbs_error("ibv_query_gid_table", label(), static_cast<int>(-n));
    std::optional<int> any_v2;
    for (ssize_t i = 0; i < n; ++i) {
      const auto& e = table[static_cast<std::size_t>(i)];
      if (e.port_num != static_cast<std::uint32_t>(port) || e.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
      if (is_ipv4_mapped(e.gid.raw)) {
        chosen = static_cast<int>(e.gid_index);
        break;
      }
      if (!any_v2) any_v2 = static_cast<int>(e.gid_index);
    }
    if (!chosen) chosen = any_v2;
    if (!chosen) {
      throw VerbsError("RoCE port " + label() + " has no RoCE v2 GID (is an IP address configured on its netdev?)");
    }
  }
  address_.gid_index = chosen.value_or(0);
  ibv_gid gid{};
  if (int rc = ibv_query_gid(context_, address_.port, address_.gid_index, &gid); rc != 0) {
    throw_verbs_error("ibv_query_gid index " + std::to_string(address_.gid_index), label(), rc);
  }
  std::memcpy(address_.gid.data(), gid.raw, 16);
  if (!address_.is_roce() && address_.lid == 0) {
    throw VerbsError("InfiniBand port " + label() + " has no LID (is the subnet manager running?)");
  }
}

Device::Device(Device&& other) noexcept
    : context_(other.context_), name_(std::move(other.name_)), attr_(other.attr_), address_(other.address_) {
  other.context_ = nullptr;
}

Device::~Device() {
  if (context_ != nullptr) ibv_close_device(context_);
}

std::string Device::label() const { return name_ + ":" + std::to_string(address_.port); }

}  // namespace xmsg::verbs
