// The network fabric: InfiniBand and RoCE devices (/sys/class/infiniband, drivers/infiniband/
// core/sysfs.c) and the physical network interfaces (/sys/class/net, Documentation/ABI/testing/
// sysfs-class-net), with the interfaces' byte counts from /proc/net/dev. Which devices, ports and
// counters there are, where they sit and what they are is read once per Fs (`*_fixed`); their
// state, rate, MTU and counters at every snapshot. A port's files as the kernel prints them:
//   ports/1/state       "4: ACTIVE"
//   ports/1/phys_state  "5: LinkUp"
//   ports/1/rate        "200 Gb/sec (4X HDR)"   ("%d%s Gb/sec (%dX%s)", rate_show)
//   ports/1/link_layer  "InfiniBand" or "Ethernet" (RoCE)
//   ports/1/counters/port_rcv_data  in units of 4 bytes (IBA PortCounters: octets / 4)
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <span>

#include "core/fs.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/readers.hpp"

namespace mainboard::host {

namespace {

/// The lane speeds rate_show names, with the rate per lane it prints for each, in tenths of a
/// Gb/s: FDR's 14.0625 Gb/s signalling is printed as 14 per lane (4X FDR is "56 Gb/sec").
struct FabricLaneSpeed {
  std::string_view name;
  int deci_gbps;
};
constexpr FabricLaneSpeed kFabricLaneSpeeds[] = {
    {"SDR", 25},  {"DDR", 50},  {"QDR", 100},  {"FDR10", 100}, {"FDR", 140},
    {"EDR", 250}, {"HDR", 500}, {"NDR", 1000}, {"XDR", 2000},
};

/// Far above any link (a 12X XDR port is 2400 Gb/s): a larger figure is not a rate.
constexpr double kFabricMaxGbps = 100000;
/// 10 Tb/s in Mb/s: an interface speed above it is a driver's unknown (UINT32_MAX), not a speed.
constexpr std::int64_t kFabricMaxSpeedMbps = 10'000'000;

/// "4: ACTIVE" into its number and name; both empty for anything else.
void fabric_parse_state(const std::optional<std::string>& text, std::optional<std::uint32_t>& id,
                        std::string& name) {
  if (!text) return;
  std::string_view v = *text;
  auto colon = v.find(':');
  if (colon == std::string_view::npos) return;
  auto number = core::parse_u64(v.substr(0, colon));
  auto word = core::trim(v.substr(colon + 1));
  if (!number || *number > 255 || word.empty() || !core::is_valid_utf8(word) ||
      word.find_first_of("\n\t") != std::string_view::npos || word.size() > 64)
    return;
  id = static_cast<std::uint32_t>(*number);
  name = std::string(word);
}

/// "200 Gb/sec (4X HDR)" into the port's rate, width, lane speed and what they carry. A kernel
/// before 3.x printed SDR without a name ("10 Gb/sec (4X)"). What does not parse stays empty.
void fabric_parse_rate(std::string_view text, InfinibandPort& p) {
  auto words = core::split_ws(text);
  if (words.size() < 3 || words[1] != "Gb/sec") return;
  auto gbps = core::parse_double(words[0]);
  if (!gbps || !(*gbps > 0 && *gbps < kFabricMaxGbps)) return;
  p.rate_gbps = *gbps;
  // "(4X HDR)" or "(4X)"
  auto open = text.find('('), close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
  auto inner = core::split_ws(text.substr(open + 1, close - open - 1));
  if (inner.empty() || inner.size() > 2 || inner[0].size() < 2 || inner[0].back() != 'X') return;
  auto width = core::parse_u64(inner[0].substr(0, inner[0].size() - 1));
  if (!width || (*width != 1 && *width != 2 && *width != 4 && *width != 8 && *width != 12)) return;
  p.width = static_cast<std::uint32_t>(*width);
  std::string_view speed = inner.size() == 2 ? inner[1] : std::string_view("SDR");
  for (const auto& lane : kFabricLaneSpeeds)
    if (lane.name == speed) {
      p.speed = std::string(lane.name);
      p.expected_gbps = static_cast<double>(lane.deci_gbps) * static_cast<double>(*width) / 10.0;
    }
}

/// The error counters node_exporter reads from ports/N/counters (IBA PortCounters).
constexpr std::string_view kFabricErrorCounters[] = {
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_discards",
    "port_xmit_constraint_errors",
    "port_rcv_constraint_errors",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
    "VL15_dropped",
};

/// The error counters of ports/N/hw_counters that RoCE ports give (mlx5 and others): transport
/// errors the IBA counters above do not see.
constexpr std::string_view kFabricHwErrorCounters[] = {
    "out_of_sequence",   "packet_seq_err",    "local_ack_timeout_err", "implied_nak_seq_err",
    "rnr_nak_retry_err", "out_of_buffer",     "rx_icrc_encapsulated",  "req_cqe_error",
    "resp_cqe_error",    "duplicate_request",
};

/// "0000:3b:00.0": a PCI function's name in sysfs (a VMD domain has five digits: "10000:01:00.0").
bool fabric_is_pci_address(std::string_view s) {
  auto hex = [](std::string_view part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c)) != 0;
    });
  };
  auto colon = s.find(':');
  if (colon < 4 || colon > 8 || s.size() != colon + 8) return false;
  auto rest = s.substr(colon);  // ":3b:00.0"
  return hex(s.substr(0, colon)) && rest[0] == ':' && rest[3] == ':' && rest[6] == '.' &&
         hex(rest.substr(1, 2)) && hex(rest.substr(4, 2)) && rest[7] >= '0' && rest[7] <= '7';
}

/// Where a class entry (/sys/class/net/eth0, a link into /sys/devices) and the device behind it
/// (its `device` link) are, as paths without links, so that every later read names the real
/// directory: a gathered host then records each link once, where it is, and reads the same. Only
/// the links are read here, through the Fs.
struct FabricPlace {
  std::string dir;     ///< the entry's own directory
  std::string device;  ///< the device's directory; empty where there is no `device` link
  std::string pci;     ///< the last PCI function on the way to it ("0000:3b:00.0"); may be empty
};

FabricPlace fabric_place(const core::Fs& fs, const std::string& entry) {
  namespace fsys = std::filesystem;
  FabricPlace out;
  fsys::path dir(entry);
  if (auto to = fs.readlink_fixed(entry); to && !to->empty()) {
    fsys::path target(*to);
    dir = (target.is_absolute() ? target : dir.parent_path() / target).lexically_normal();
  }
  out.dir = dir.string();
  // lo, bridges, bonds, veths and tunnels live under devices/virtual: no device link to ask for
  // (a container host has hundreds of veths).
  if (core::starts_with(out.dir, "/sys/devices/virtual/")) return out;
  auto device = fs.readlink_fixed(out.dir + "/device");
  if (!device || device->empty()) return out;
  fsys::path target(*device);
  fsys::path where = (target.is_absolute() ? target : dir / target).lexically_normal();
  out.device = where.string();
  // A virtio NIC's device is virtio0, below its PCI function.
  for (const auto& part : where)
    if (fabric_is_pci_address(part.string())) out.pci = part.string();
  return out;
}

/// The device's numa_node: -1 (no affinity) and what does not parse are empty.
std::optional<std::int32_t> fabric_numa_node(const core::Fs& fs, const FabricPlace& at) {
  if (at.device.empty()) return std::nullopt;
  auto node = fs.read_i64_fixed(at.device + "/numa_node");
  if (!node || *node < 0 || *node > 4095) return std::nullopt;
  return static_cast<std::int32_t>(*node);
}

/// A one-line attribute as text, empty when unreadable or not text.
std::string fabric_text(const std::optional<std::string>& line) {
  if (!line || line->size() > 256 || !core::is_valid_utf8(*line)) return "";
  return *line;
}

/// Entries named by numbers, in numeric order (ports 1, 2, … 10).
std::vector<std::uint32_t> fabric_numbered(const std::vector<std::string>& names) {
  std::vector<std::uint32_t> out;
  for (const auto& n : names)
    if (auto v = core::parse_u64(n);
        v && *v <= 0xffff && n.find_first_not_of("0123456789") == std::string::npos)
      out.push_back(static_cast<std::uint32_t>(*v));
  std::sort(out.begin(), out.end());
  return out;
}

InfinibandPort fabric_read_port(const core::Fs& fs, const std::string& dir, std::uint32_t number,
                                const std::string& who, std::vector<std::string>& unreadable) {
  InfinibandPort p;
  p.port = number;
  fabric_parse_state(fs.read_line(dir + "/state"), p.state_id, p.state);
  if (p.state.empty()) unreadable.push_back(who + " state");
  fabric_parse_state(fs.read_line(dir + "/phys_state"), p.physical_state_id, p.physical_state);
  if (p.physical_state.empty()) unreadable.push_back(who + " physical state");
  p.rate = fabric_text(fs.read_line(dir + "/rate"));
  fabric_parse_rate(p.rate, p);
  if (!p.rate_gbps || !p.width || p.speed.empty()) unreadable.push_back(who + " rate");
  p.link_layer = fabric_text(fs.read_line_fixed(dir + "/link_layer"));
  // Data counters count 4-byte words; a count whose bytes overflow 64 bits is no count.
  auto words = [&](const char* name) -> std::optional<std::uint64_t> {
    auto v = fs.read_u64(dir + "/counters/" + name);
    return v ? core::checked_mul(*v, 4) : std::nullopt;
  };
  p.received_bytes = words("port_rcv_data");
  p.transmitted_bytes = words("port_xmit_data");
  // Which counters a port has is fixed by its driver: only those are read.
  auto read_counters = [&](const std::string& sub, std::span<const std::string_view> names) {
    auto present = fs.list_fixed(dir + "/" + sub);
    for (auto name : names)
      if (std::binary_search(present.begin(), present.end(), name))
        if (auto v = fs.read_u64(dir + "/" + sub + "/" + std::string(name)))
          p.errors.emplace(std::string(name), *v);
  };
  read_counters("counters", kFabricErrorCounters);
  read_counters("hw_counters", kFabricHwErrorCounters);
  if (!p.received_bytes && !p.transmitted_bytes && p.errors.empty())
    unreadable.push_back(who + " counters");
  return p;
}

/// Received and transmitted bytes of every interface, from one read of /proc/net/dev where
/// /sys/class/net/NAME/statistics takes two files per interface:
///   "  eth0: 550170239   20244    0 … 0  1089817   13356 …" (8 receive fields, then transmit)
/// A line that does not parse is left out, and that interface's statistics are read instead.
std::map<std::string, std::pair<std::uint64_t, std::uint64_t>, std::less<>> fabric_net_dev(
    const std::optional<std::string>& text) {
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>, std::less<>> out;
  if (!text) return out;
  for (auto line : core::split(*text, '\n')) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // the two header lines
    auto name = core::trim(line.substr(0, colon));
    auto fields = core::split_ws(line.substr(colon + 1));
    if (name.empty() || fields.size() < 16) continue;
    auto rx = core::parse_u64(fields[0]), tx = core::parse_u64(fields[8]);
    if (rx && tx) out.emplace(std::string(name), std::pair{*rx, *tx});
  }
  return out;
}

}  // namespace

Reading<Infiniband> read_infiniband(const Sources& sources, const MachineSnapshot&, Note& note) {
  const core::Fs& fs = *sources.fs;
  const std::string root = "/sys/class/infiniband";
  if (!fs.is_dir_fixed(root)) {
    std::string why = "no InfiniBand or RoCE devices (no " + root + ")";
    note.unsupported(why);
    return Reading<Infiniband>::none(std::move(why));
  }
  Infiniband out;
  std::vector<std::string> unreadable;
  for (const auto& name : fs.list_fixed(root)) {
    if (!core::is_valid_utf8(name)) continue;
    auto at = fabric_place(fs, root + "/" + name);
    const std::string& dir = at.dir;
    InfinibandDevice d;
    d.name = name;
    d.hca_type = fabric_text(fs.read_line_fixed(dir + "/hca_type"));
    d.firmware = fabric_text(fs.read_line_fixed(dir + "/fw_ver"));
    d.board_id = fabric_text(fs.read_line_fixed(dir + "/board_id"));
    d.node_guid = fabric_text(fs.read_line_fixed(dir + "/node_guid"));
    d.pci_address = at.pci;
    d.numa_node = fabric_numa_node(fs, at);
    if (!at.device.empty())
      for (const auto& net : fs.list_fixed(at.device + "/net"))
        if (core::is_valid_utf8(net)) d.net_devices.push_back(net);
    auto ports = fabric_numbered(fs.list_fixed(dir + "/ports"));
    if (ports.empty()) unreadable.push_back(name + " ports");
    for (auto n : ports)
      d.ports.push_back(fabric_read_port(fs, dir + "/ports/" + std::to_string(n), n,
                                         name + " port " + std::to_string(n), unreadable));
    out.devices.push_back(std::move(d));
  }
  if (out.devices.empty()) {
    std::string why = "no InfiniBand or RoCE devices (" + root + " is empty)";
    note.unsupported(why);
    return Reading<Infiniband>::none(std::move(why));
  }
  if (!unreadable.empty()) {
    std::string what;
    for (const auto& u : unreadable)
      what += (what.empty() ? "" : ", ") + u;
    note.reason = "unreadable: " + what;
  }
  return out;
}

Reading<Network> read_network(const Sources& sources, const MachineSnapshot&, Note& note) {
  const core::Fs& fs = *sources.fs;
  const std::string root = "/sys/class/net";
  if (!fs.is_dir_fixed(root)) {
    std::string why = "no " + root + " (not Linux, or /sys is not mounted)";
    note.unsupported(why);
    return Reading<Network>::none(std::move(why));
  }
  Network out;
  std::optional<decltype(fabric_net_dev({}))> counters;  // read when a physical interface is met
  for (const auto& name : fs.list_fixed(root)) {
    if (!core::is_valid_utf8(name)) continue;
    // Physical interfaces have a device behind them; lo, bridges, bonds, veths, VLANs, tunnels
    // and containers' interfaces do not.
    auto at = fabric_place(fs, root + "/" + name);
    if (at.device.empty()) continue;
    const std::string& dir = at.dir;
    NetworkInterface i;
    i.name = name;
    i.pci_address = at.pci;
    if (auto driver = fs.link_name_fixed(at.device + "/driver");
        driver && core::is_valid_utf8(*driver))
      i.driver = *driver;
    if (auto type = fs.read_u64_fixed(dir + "/type"))
      i.type = *type == 1 ? "ethernet" : *type == 32 ? "infiniband" : "other";
    i.address = fabric_text(fs.read_line_fixed(dir + "/address"));
    // What moves: the link's state, speed, MTU and counters.
    i.operstate = fabric_text(fs.read_line(dir + "/operstate"));
    // A down link's speed is -1, unreadable (EINVAL) or the last one it had: none of them is its
    // speed now, so it is not asked.
    if (i.operstate != "down")
      if (auto speed = fs.read_i64(dir + "/speed");
          speed && *speed > 0 && *speed < kFabricMaxSpeedMbps)
        i.speed_mbps = static_cast<std::uint64_t>(*speed);
    if (auto mtu = fs.read_u64(dir + "/mtu"); mtu && *mtu > 0 && *mtu <= 0xffffffffull)
      i.mtu = static_cast<std::uint32_t>(*mtu);
    i.numa_node = fabric_numa_node(fs, at);
    if (!counters) counters = fabric_net_dev(fs.read(core::paths::kProcNetDev, 1u << 20));
    if (auto it = counters->find(name); it != counters->end()) {
      i.received_bytes = it->second.first;
      i.transmitted_bytes = it->second.second;
    } else {
      i.received_bytes = fs.read_u64(dir + "/statistics/rx_bytes");
      i.transmitted_bytes = fs.read_u64(dir + "/statistics/tx_bytes");
    }
    out.interfaces.push_back(std::move(i));
  }
  return out;
}

}  // namespace mainboard::host
