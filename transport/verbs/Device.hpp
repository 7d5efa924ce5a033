// Device: one opened RDMA device and port, with the addressing facts a peer needs.
//
// Selection: XMSG_IB_DEVICE=name[:port] when set (an error naming the device and listing the
// available ones when it does not exist); otherwise the device nearest to the CPUs this process
// is bound to (hwloc's OpenFabrics helper), then the first one with an active port. The port is
// the first ACTIVE one unless named.
//
// Addressing: InfiniBand uses the LID (and GID index 0); RoCE uses the RoCE v2 GID whose entry is
// the IPv4-mapped address (::ffff:a.b.c.d), overridable with XMSG_IB_GID_INDEX. Path MTU is the
// port's active MTU.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xmsg::verbs {

struct DeviceSpec {
  std::string name;
  std::optional<int> port;
};
// Parses "name" or "name:port"; throws std::invalid_argument naming `variable` on bad text.
DeviceSpec parse_device_spec(std::string_view text, std::string_view variable = "XMSG_IB_DEVICE");

// Names of the RDMA devices present (empty on a machine without any).
std::vector<std::string> list_device_names();

// Where a port is, as a peer addresses it.
struct PortAddress {
  std::uint8_t port = 0;
  std::uint8_t link_layer = IBV_LINK_LAYER_UNSPECIFIED;
  std::uint16_t lid = 0;
  int gid_index = 0;
  std::array<std::uint8_t, 16> gid{};
  ibv_mtu path_mtu = IBV_MTU_1024;
  bool is_roce() const { return link_layer == IBV_LINK_LAYER_ETHERNET; }
};

class Device {
 public:
  // Opens the device chosen as above. Throws VerbsError (no device, device/port not found,
  // port not active, no usable GID) naming the device.
  static Device open_default();
  static Device open(const DeviceSpec& spec);

  Device(Device&& other) noexcept;
  Device& operator=(Device&&) = delete;
  Device(const Device&) = delete;
  ~Device();

  ibv_context* context() const { return context_; }
  const std::string& name() const { return name_; }
  const PortAddress& address() const { return address_; }
  const ibv_device_attr& attributes() const { return attr_; }
  bool supports_xrc() const { return (attr_.device_cap_flags & IBV_DEVICE_XRC) != 0; }
  // "rxe0:1" - used in every error message.
  std::string label() const;

 private:
  Device(ibv_context* context, std::string name, int port);
  void query_port(int port);

  ibv_context* context_ = nullptr;
  std::string name_;
  ibv_device_attr attr_{};
  PortAddress address_{};
};

// ibv_mtu -> bytes (256..4096).
int mtu_bytes(ibv_mtu mtu);

}  // namespace xmsg::verbs
