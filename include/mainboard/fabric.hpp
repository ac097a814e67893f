#pragma once

// The host's network fabric: InfiniBand and RoCE ports (/sys/class/infiniband) and the physical
// network interfaces (/sys/class/net), read through the sysroot seam.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

/// One port of an InfiniBand or RoCE device (/sys/class/infiniband/DEV/ports/N).
struct MAINBOARD_API InfinibandPort {
  std::uint32_t port = 0;
  std::string state;                      ///< ACTIVE, DOWN, INIT, ARMED (from "4: ACTIVE")
  std::optional<std::uint32_t> state_id;  ///< the number before the name
  std::string physical_state;             ///< LinkUp, Polling, Disabled…
  std::optional<std::uint32_t> physical_state_id;
  std::string rate;                                ///< as the kernel says it: "200 Gb/sec (4X HDR)"
  std::optional<double> rate_gbps;                 ///< the number in it
  std::optional<std::uint32_t> width;              ///< lanes: 1, 2, 4, 8, 12 (the "4X")
  std::string speed;                               ///< lane speed's name: SDR … HDR, NDR, XDR
  std::optional<double> expected_gbps;             ///< what that width and speed carry
  std::string link_layer;                          ///< InfiniBand or Ethernet (RoCE)
  std::optional<std::uint64_t> received_bytes;     ///< port_rcv_data × 4
  std::optional<std::uint64_t> transmitted_bytes;  ///< port_xmit_data × 4
  /// Error counters by their sysfs name (symbol_error, link_downed, port_rcv_errors…).
  std::map<std::string, std::uint64_t> errors;
  bool operator==(const InfinibandPort&) const = default;
};

template <class V>
void fields(V& v, InfinibandPort& m) {
  v("port", m.port);
  v("state", m.state);
  v("state_id", m.state_id);
  v("physical_state", m.physical_state);
  v("physical_state_id", m.physical_state_id);
  v("rate", m.rate);
  v("rate_gbps", m.rate_gbps);
  v("width", m.width);
  v("speed", m.speed);
  v("expected_gbps", m.expected_gbps);
  v("link_layer", m.link_layer);
  v("received_bytes", m.received_bytes);
  v("transmitted_bytes", m.transmitted_bytes);
  v("errors", m.errors);
}

/// One InfiniBand or RoCE device: a host channel adapter (mlx5_0).
struct MAINBOARD_API InfinibandDevice {
  std::string name;         ///< mlx5_0
  std::string hca_type;     ///< MT4123
  std::string firmware;     ///< fw_ver
  std::string board_id;     ///< MT_0000000223
  std::string node_guid;    ///< 0c42:a103:00b2:1c4e
  std::string pci_address;  ///< 0000:3b:00.0
  std::optional<std::int32_t> numa_node;
  std::vector<std::string> net_devices;  ///< its network interfaces (ib0, or a RoCE port's)
  std::vector<InfinibandPort> ports;
  bool operator==(const InfinibandDevice&) const = default;
};

template <class V>
void fields(V& v, InfinibandDevice& m) {
  v("name", m.name);
  v("hca_type", m.hca_type);
  v("firmware", m.firmware);
  v("board_id", m.board_id);
  v("node_guid", m.node_guid);
  v("pci_address", m.pci_address);
  v("numa_node", m.numa_node);
  v("net_devices", m.net_devices);
  v("ports", m.ports);
}

/// Every InfiniBand and RoCE device. Unavailable where /sys/class/infiniband is absent.
struct MAINBOARD_API Infiniband {
  std::vector<InfinibandDevice> devices;
  bool operator==(const Infiniband&) const = default;
};

template <class V>
void fields(V& v, Infiniband& m) {
  v("devices", m.devices);
}

/// A physical network interface (one with a device behind it: not lo, bridges, veths).
struct MAINBOARD_API NetworkInterface {
  std::string name;                         ///< ens1f0, eth0, ib0
  std::string driver;                       ///< mlx5_core, ixgbe, virtio_net
  std::string operstate;                    ///< up, down, unknown, dormant…
  std::string type;                         ///< ethernet, infiniband, other (ARPHRD)
  std::string address;                      ///< MAC
  std::optional<std::uint64_t> speed_mbps;  ///< empty when the link is down or unknown (-1)
  std::optional<std::uint32_t> mtu;
  std::optional<std::int32_t> numa_node;
  std::string pci_address;  ///< empty for a device not on PCI
  std::optional<std::uint64_t> received_bytes;
  std::optional<std::uint64_t> transmitted_bytes;
  bool operator==(const NetworkInterface&) const = default;
};

template <class V>
void fields(V& v, NetworkInterface& m) {
  v("name", m.name);
  v("driver", m.driver);
  v("operstate", m.operstate);
  v("type", m.type);
  v("address", m.address);
  v("speed_mbps", m.speed_mbps);
  v("mtu", m.mtu);
  v("numa_node", m.numa_node);
  v("pci_address", m.pci_address);
  v("received_bytes", m.received_bytes);
  v("transmitted_bytes", m.transmitted_bytes);
}

/// The physical network interfaces. Unavailable where /sys/class/net cannot be read.
struct MAINBOARD_API Network {
  std::vector<NetworkInterface> interfaces;
  bool operator==(const Network&) const = default;
};

template <class V>
void fields(V& v, Network& m) {
  v("interfaces", m.interfaces);
}

}  // namespace mainboard
