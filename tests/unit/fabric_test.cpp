// The network fabric (/sys/class/infiniband, /sys/class/net): the port and interface files as
// the kernel prints them and as it does not, the fixture hosts through the Machine, the
// readiness rules, the metrics and a gathered copy of a host.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/fs.hpp"
#include "fixture_machine.hpp"
#include "host/note.hpp"
#include "host/readers.hpp"
#include "mainboard/check.hpp"
#include "mainboard/gather.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "serve/exposition.hpp"
#include "serve/metrics.hpp"
#include "test_util.hpp"
#include "view/summary.hpp"

using namespace mainboard;

namespace {

const std::string kPort = "sys/class/infiniband/mlx5_0/ports/1/";

/// Port 1 of mlx5_0 with these files (name → text), read through the probe's reader.
InfinibandPort fabric_port(const std::vector<std::pair<std::string, std::string>>& files,
                           host::Note* note_out = nullptr) {
  TempDir root;
  root.mkdir(kPort);
  for (const auto& [name, text] : files)
    root.write(kPort + name, text);
  host::Sources sources;
  sources.fs = std::make_shared<core::Fs>(root.path());
  host::Note note;
  auto ib = host::read_infiniband(sources, MachineSnapshot{}, note);
  if (note_out) *note_out = note;
  if (!ib || ib->devices.size() != 1 || ib->devices[0].ports.size() != 1) {
    ADD_FAILURE() << "no port read: " << ib.reason();
    return {};
  }
  return ib->devices[0].ports[0];
}

InfinibandPort rate_of(const std::string& text) {
  return fabric_port({{"rate", text}});
}

}  // namespace

TEST(Fabric, RateAsTheKernelPrintsIt) {
  // rate_show: "%d%s Gb/sec (%dX%s)", the lane rate in tenths of a Gb/s times the width.
  struct Case {
    const char* text;
    double gbps;
    std::uint32_t width;
    const char* speed;
    double expected;
  };
  for (const auto& c :
       {Case{"200 Gb/sec (4X HDR)\n", 200, 4, "HDR", 200},
        Case{"50 Gb/sec (1X HDR)", 50, 1, "HDR", 50},
        Case{"56 Gb/sec (4X FDR)", 56, 4, "FDR", 56},  // FDR prints 14 a lane
        Case{"40 Gb/sec (4X FDR10)", 40, 4, "FDR10", 40},
        Case{"2.5 Gb/sec (1X SDR)", 2.5, 1, "SDR", 2.5},
        Case{"30 Gb/sec (12X SDR)", 30, 12, "SDR", 30},
        Case{"10 Gb/sec (4X)", 10, 4, "SDR", 10},  // kernels before 3.x
        Case{"100 Gb/sec (4X EDR)", 100, 4, "EDR", 100},
        Case{"80 Gb/sec (8X QDR)", 80, 8, "QDR", 80}, Case{"20 Gb/sec (4X DDR)", 20, 4, "DDR", 20},
        Case{"800 Gb/sec (8X NDR)", 800, 8, "NDR", 800},
        Case{"800 Gb/sec (4X XDR)", 800, 4, "XDR", 800}}) {
    auto p = rate_of(c.text);
    ASSERT_TRUE(p.rate_gbps) << c.text;
    EXPECT_DOUBLE_EQ(*p.rate_gbps, c.gbps) << c.text;
    EXPECT_EQ(p.width, c.width) << c.text;
    EXPECT_EQ(p.speed, c.speed) << c.text;
    ASSERT_TRUE(p.expected_gbps) << c.text;
    EXPECT_DOUBLE_EQ(*p.expected_gbps, c.expected) << c.text;
  }
  EXPECT_EQ(rate_of("200 Gb/sec (4X HDR)\n").rate, "200 Gb/sec (4X HDR)");
}

TEST(Fabric, MalformedRateDegrades) {
  // Nothing that is no rate becomes one.
  for (std::string text :
       {std::string(""), std::string("fast"), std::string("Gb/sec"), std::string("200"),
        std::string("200 Mb/sec (4X HDR)"), std::string("nan Gb/sec (4X HDR)"),
        std::string("inf Gb/sec (4X HDR)"), std::string("-200 Gb/sec (4X HDR)"),
        std::string("0 Gb/sec (4X HDR)"), std::string("1e300 Gb/sec (4X HDR)"),
        std::string("\x01\x02\xff Gb/sec"), std::string(1 << 16, '9')}) {
    auto p = rate_of(text);
    EXPECT_FALSE(p.rate_gbps) << text.substr(0, 40);
    EXPECT_FALSE(p.width) << text.substr(0, 40);
    EXPECT_FALSE(p.expected_gbps) << text.substr(0, 40);
  }
  // A rate with a width or speed the kernel never prints keeps the rate and nothing more.
  for (std::string text :
       {std::string("200 Gb/sec (3X HDR)"), std::string("200 Gb/sec (0X HDR)"),
        std::string("200 Gb/sec (4 HDR)"), std::string("200 Gb/sec (4X HDR"),
        std::string("200 Gb/sec (99999999999999999999X HDR)"), std::string("200 Gb/sec ()")}) {
    auto p = rate_of(text);
    ASSERT_TRUE(p.rate_gbps) << text;
    EXPECT_DOUBLE_EQ(*p.rate_gbps, 200) << text;
    EXPECT_FALSE(p.width) << text;
    EXPECT_FALSE(p.expected_gbps) << text;
  }
  auto unknown_speed = rate_of("200 Gb/sec (4X ZDR)");
  EXPECT_EQ(unknown_speed.width, 4u);
  EXPECT_EQ(unknown_speed.speed, "");
  EXPECT_FALSE(unknown_speed.expected_gbps);
  // A FIFO where the rate should be reads as nothing, without blocking.
  TempDir root;
  root.mkdir(kPort);
  ASSERT_EQ(::mkfifo((root.path() / kPort / "rate").c_str(), 0600), 0);
  root.write(kPort + "state", "4: ACTIVE\n");
  host::Sources sources;
  sources.fs = std::make_shared<core::Fs>(root.path());
  host::Note note;
  auto ib = host::read_infiniband(sources, MachineSnapshot{}, note);
  ASSERT_TRUE(ib);
  EXPECT_FALSE(ib->devices[0].ports[0].rate_gbps);
  EXPECT_EQ(ib->devices[0].ports[0].state, "ACTIVE");
  EXPECT_NE(note.reason.find("mlx5_0 port 1 rate"), std::string::npos) << note.reason;
}

TEST(Fabric, StatesAndCounters) {
  auto p = fabric_port({{"state", "4: ACTIVE\n"},
                        {"phys_state", "5: LinkUp\n"},
                        {"link_layer", "Ethernet\n"},
                        {"counters/port_rcv_data", "1000\n"},
                        {"counters/port_xmit_data", "4611686018427387904\n"},  // 2^62: × 4 = 2^64
                        {"counters/symbol_error", "3\n"},
                        {"counters/VL15_dropped", "18446744073709551615\n"},
                        {"counters/link_downed", "-1\n"},
                        {"counters/port_rcv_errors", "nan\n"},
                        {"counters/port_xmit_discards", "99999999999999999999\n"},
                        {"counters/port_xmit_wait", "5\n"}});  // not an error counter
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.state_id, 4u);
  EXPECT_EQ(p.physical_state, "LinkUp");
  EXPECT_EQ(p.physical_state_id, 5u);
  EXPECT_EQ(p.link_layer, "Ethernet");
  EXPECT_EQ(p.received_bytes, 4000u);  // counted in 4-byte words
  EXPECT_FALSE(p.transmitted_bytes);   // its bytes overflow 64 bits: no count
  EXPECT_EQ(p.errors, (std::map<std::string, std::uint64_t>{
                          {"symbol_error", 3}, {"VL15_dropped", 18446744073709551615ull}}));
  for (std::string state :
       {std::string(""), std::string("ACTIVE"), std::string("4:"), std::string(": ACTIVE"),
        std::string("x: ACTIVE"), std::string("999: ACTIVE"), std::string("-1: DOWN"),
        std::string("4: \xff\xfe")}) {
    host::Note note;
    auto q = fabric_port({{"state", state}}, &note);
    EXPECT_EQ(q.state, "") << state;
    EXPECT_FALSE(q.state_id) << state;
    EXPECT_NE(note.reason.find("mlx5_0 port 1 state"), std::string::npos) << note.reason;
    EXPECT_NE(note.reason.find("mlx5_0 port 1 counters"), std::string::npos) << note.reason;
  }
}

TEST(Fabric, NoDevicesIsUnavailableWithWhy) {
  auto vm = Machine(fixture_options("vm-cgroup1-nodmi")).snapshot({.toolchain = false});
  ASSERT_FALSE(vm.infiniband);
  EXPECT_EQ(vm.infiniband.reason(), "no InfiniBand or RoCE devices (no /sys/class/infiniband)");
  EXPECT_EQ(vm.infiniband.unavailable()->status, ProbeStatus::unsupported);
  ASSERT_NE(vm.diagnostic("infiniband"), nullptr);
  EXPECT_EQ(vm.diagnostic("infiniband")->status, ProbeStatus::unsupported);
  ASSERT_FALSE(vm.network);
  EXPECT_NE(vm.network.reason().find("no /sys/class/net"), std::string::npos);
  TempDir empty;
  empty.mkdir("sys/class/infiniband");
  host::Sources sources;
  sources.fs = std::make_shared<core::Fs>(empty.path());
  host::Note note;
  auto none = host::read_infiniband(sources, MachineSnapshot{}, note);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.reason(), "no InfiniBand or RoCE devices (/sys/class/infiniband is empty)");
  EXPECT_EQ(note.status, ProbeStatus::unsupported);
}

TEST(Fabric, HpcFabricHostThroughTheMachine) {
  Machine m(fixture_options("hpc-fabric"));
  auto s = m.snapshot({.toolchain = false});
  ASSERT_TRUE(s.infiniband) << s.infiniband.reason();
  const auto& devices = s.infiniband->devices;
  ASSERT_EQ(devices.size(), 4u);
  const auto& d0 = devices[0];
  EXPECT_EQ(d0.name, "mlx5_0");
  EXPECT_EQ(d0.hca_type, "MT4123");
  EXPECT_EQ(d0.firmware, "20.39.1002");
  EXPECT_EQ(d0.board_id, "MT_0000000223");
  EXPECT_EQ(d0.node_guid, "0c42:a103:00b2:1c4e");
  EXPECT_EQ(d0.pci_address, "0000:17:00.0");
  EXPECT_EQ(d0.numa_node, 0);
  EXPECT_EQ(d0.net_devices, std::vector<std::string>{"ib0"});
  ASSERT_EQ(d0.ports.size(), 1u);
  const auto& p0 = d0.ports[0];
  EXPECT_EQ(p0.port, 1u);
  EXPECT_EQ(p0.state, "ACTIVE");
  EXPECT_EQ(p0.state_id, 4u);
  EXPECT_EQ(p0.physical_state, "LinkUp");
  EXPECT_EQ(p0.physical_state_id, 5u);
  EXPECT_EQ(p0.rate, "200 Gb/sec (4X HDR)");
  EXPECT_EQ(p0.rate_gbps, 200.0);
  EXPECT_EQ(p0.width, 4u);
  EXPECT_EQ(p0.speed, "HDR");
  EXPECT_EQ(p0.expected_gbps, 200.0);
  EXPECT_EQ(p0.link_layer, "InfiniBand");
  EXPECT_EQ(p0.received_bytes, 10000000000u);
  EXPECT_EQ(p0.transmitted_bytes, 5000000000u);
  EXPECT_EQ(p0.errors.size(), 12u);
  EXPECT_EQ(p0.errors.at("link_downed"), 1u);
  EXPECT_EQ(p0.errors.at("port_rcv_errors"), 2u);
  EXPECT_EQ(p0.errors.at("symbol_error"), 0u);
  const auto& p1 = devices[1].ports[0];
  EXPECT_EQ(devices[1].pci_address, "0000:31:00.0");
  EXPECT_EQ(p1.state, "DOWN");
  EXPECT_EQ(p1.state_id, 1u);
  EXPECT_EQ(p1.physical_state, "Polling");
  EXPECT_EQ(p1.physical_state_id, 2u);
  const auto& d2 = devices[2];
  EXPECT_EQ(d2.numa_node, 1);
  EXPECT_EQ(d2.ports[0].width, 1u);
  EXPECT_EQ(d2.ports[0].rate_gbps, 50.0);
  EXPECT_EQ(d2.ports[0].errors.at("symbol_error"), 1520u);
  const auto& d3 = devices[3];
  EXPECT_EQ(d3.name, "mlx5_3");
  EXPECT_EQ(d3.ports[0].link_layer, "Ethernet");
  EXPECT_EQ(d3.net_devices, std::vector<std::string>{"ens6f0np0"});
  EXPECT_EQ(d3.pci_address, "0000:ca:00.0");
  // A RoCE port's transport errors from hw_counters, beside the IBA counters.
  EXPECT_EQ(d3.ports[0].errors.at("out_of_sequence"), 17u);
  EXPECT_EQ(d3.ports[0].errors.at("rx_icrc_encapsulated"), 0u);
  EXPECT_EQ(d3.ports[0].errors.size(), 14u);
  const auto* diag = s.diagnostic("infiniband");
  ASSERT_NE(diag, nullptr);
  EXPECT_EQ(diag->status, ProbeStatus::ok);
  EXPECT_EQ(diag->reason, "");

  ASSERT_TRUE(s.network) << s.network.reason();
  std::vector<std::string> names;
  for (const auto& i : s.network->interfaces)
    names.push_back(i.name);
  // Physical ones only: lo, docker0, the veth and the bond have no device behind them.
  EXPECT_EQ(names, (std::vector<std::string>{"eno1", "eno2", "ens6f0np0", "ib0", "ib1", "ib2"}));
  const auto& eno1 = s.network->interfaces[0];
  EXPECT_EQ(eno1.driver, "ice");
  EXPECT_EQ(eno1.operstate, "up");
  EXPECT_EQ(eno1.type, "ethernet");
  EXPECT_EQ(eno1.address, "b4:96:91:aa:bb:01");
  EXPECT_EQ(eno1.speed_mbps, 25000u);
  EXPECT_EQ(eno1.mtu, 9000u);
  EXPECT_FALSE(eno1.numa_node);  // -1: no affinity
  EXPECT_EQ(eno1.pci_address, "0000:41:00.0");
  EXPECT_EQ(eno1.received_bytes, 123456789012u);
  EXPECT_EQ(eno1.transmitted_bytes, 98765432109u);
  const auto& eno2 = s.network->interfaces[1];
  EXPECT_EQ(eno2.operstate, "down");
  EXPECT_FALSE(eno2.speed_mbps);  // -1
  EXPECT_EQ(eno2.pci_address, "0000:41:00.1");
  const auto& roce = s.network->interfaces[2];
  EXPECT_EQ(roce.driver, "mlx5_core");
  EXPECT_EQ(roce.speed_mbps, 200000u);
  EXPECT_EQ(roce.numa_node, 1);
  const auto& ib0 = s.network->interfaces[3];
  EXPECT_EQ(ib0.type, "infiniband");
  EXPECT_EQ(ib0.mtu, 4092u);
  EXPECT_EQ(ib0.address, "00:00:10:87:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:b2:1c:4e");
  EXPECT_FALSE(s.network->interfaces[4].speed_mbps);       // ib1: down, no speed file
  EXPECT_EQ(s.network->interfaces[5].speed_mbps, 50000u);  // ib2: its port's one HDR lane

  // Read alone, as serve does; and in JSON both ways.
  EXPECT_EQ(m.reading("infiniband").infiniband, s.infiniband);
  nlohmann::json j = s;
  EXPECT_EQ(j["infiniband"]["devices"][2]["ports"][0]["width"], 1);
  EXPECT_EQ(j["network"]["interfaces"][1]["speed_mbps"], nullptr);
  EXPECT_EQ(j.get<MachineSnapshot>().infiniband, s.infiniband);
  EXPECT_EQ(j.get<MachineSnapshot>().network, s.network);
}

TEST(Fabric, MalformedHostDegradesWithReasons) {
  auto s = Machine(fixture_options("fabric-malformed")).snapshot({.toolchain = false});
  ASSERT_TRUE(s.infiniband) << s.infiniband.reason();
  const auto& devices = s.infiniband->devices;
  ASSERT_EQ(devices.size(), 3u);
  const auto& d0 = devices[0];
  EXPECT_EQ(d0.hca_type, "MT4123");
  EXPECT_EQ(d0.pci_address, "");  // no device link
  EXPECT_FALSE(d0.numa_node);
  ASSERT_EQ(d0.ports.size(), 1u);
  const auto& p0 = d0.ports[0];
  EXPECT_EQ(p0.state, "");
  EXPECT_FALSE(p0.state_id);
  EXPECT_EQ(p0.physical_state, "");
  EXPECT_EQ(p0.rate, "fast");
  EXPECT_FALSE(p0.rate_gbps);
  EXPECT_FALSE(p0.received_bytes);
  EXPECT_FALSE(p0.transmitted_bytes);
  EXPECT_EQ(p0.errors, (std::map<std::string, std::uint64_t>{{"port_rcv_errors", 7}}));
  const auto& d1 = devices[1];
  EXPECT_EQ(d1.pci_address, "0000:01:00.0");
  EXPECT_EQ(d1.numa_node, 0);
  ASSERT_EQ(d1.ports.size(), 1u);  // "x" and "0x2" are no ports
  EXPECT_EQ(d1.ports[0].rate_gbps, 200.0);
  EXPECT_FALSE(d1.ports[0].width);
  EXPECT_FALSE(d1.ports[0].expected_gbps);
  EXPECT_FALSE(d1.ports[0].received_bytes);
  EXPECT_TRUE(d1.ports[0].errors.empty());
  EXPECT_TRUE(devices[2].ports.empty());
  const auto* diag = s.diagnostic("infiniband");
  ASSERT_NE(diag, nullptr);
  EXPECT_EQ(diag->reason,
            "unreadable: mlx5_0 port 1 state, mlx5_0 port 1 physical state, mlx5_0 port 1 rate, "
            "mlx5_1 port 1 rate, mlx5_1 port 1 counters, mlx5_2 ports");

  ASSERT_TRUE(s.network) << s.network.reason();
  ASSERT_EQ(s.network->interfaces.size(), 2u);  // lo: no device
  const auto& eth0 = s.network->interfaces[0];
  EXPECT_EQ(eth0.name, "eth0");
  EXPECT_EQ(eth0.driver, "virtio-pci");
  EXPECT_EQ(eth0.operstate, "up");
  EXPECT_FALSE(eth0.speed_mbps);  // 4294967295: a driver's unknown
  EXPECT_FALSE(eth0.mtu);
  EXPECT_FALSE(eth0.numa_node);
  EXPECT_EQ(eth0.type, "other");
  EXPECT_FALSE(eth0.received_bytes);
  const auto& eth1 = s.network->interfaces[1];
  EXPECT_EQ(eth1.driver, "");
  EXPECT_EQ(eth1.operstate, "");
  EXPECT_EQ(eth1.type, "");
  EXPECT_FALSE(eth1.speed_mbps);
  EXPECT_FALSE(eth1.mtu);
  EXPECT_EQ(eth1.pci_address, "0000:03:00.0");
}

TEST(Fabric, InterfaceSpeedIsEmptyWhenNotASpeed) {
  auto speed = [](const std::string& operstate, const std::string& text) {
    TempDir root;
    std::string dir = "sys/devices/pci0000:00/0000:00:03.0/net/eth0";
    root.mkdir(dir);
    root.mkdir("sys/class/net");
    std::filesystem::create_directory_symlink("../../devices/pci0000:00/0000:00:03.0/net/eth0",
                                              root.path() / "sys/class/net/eth0");
    std::filesystem::create_directory_symlink("../../../0000:00:03.0",
                                              root.path() / dir / "device");
    root.write(dir + "/operstate", operstate + "\n");
    root.write(dir + "/speed", text);
    host::Sources sources;
    sources.fs = std::make_shared<core::Fs>(root.path());
    host::Note note;
    auto n = host::read_network(sources, MachineSnapshot{}, note);
    EXPECT_TRUE(n);
    EXPECT_EQ(n->interfaces.size(), 1u);
    EXPECT_EQ(n->interfaces[0].pci_address, "0000:00:03.0");
    return n->interfaces[0].speed_mbps;
  };
  EXPECT_EQ(speed("up", "100000\n"), 100000u);
  EXPECT_EQ(speed("unknown", "10\n"), 10u);
  for (std::string text : {std::string("-1"), std::string("0"), std::string("4294967295"),
                           std::string("99999999999999999999999"), std::string(""),
                           std::string("fast"), std::string("nan"), std::string("1e5")})
    EXPECT_FALSE(speed("up", text)) << text;
  EXPECT_FALSE(speed("down", "10000\n"));  // the last speed of a link that is down
}

// The byte counts of every interface come from one read of /proc/net/dev; an interface it does
// not list (or lists in a line that does not parse) has its statistics files read instead.
TEST(Fabric, InterfaceCountersFromProcNetDev) {
  TempDir root;
  for (std::string nic : {"eth0", "eth1"}) {
    std::string slot = nic == "eth0" ? "0000:00:03.0" : "0000:00:04.0";
    std::string dir = "sys/devices/pci0000:00/" + slot + "/net/" + nic;
    root.mkdir(dir);
    root.mkdir("sys/class/net");
    std::filesystem::create_directory_symlink("../../devices/pci0000:00/" + slot + "/net/" + nic,
                                              root.path() / "sys/class/net" / nic);
    std::filesystem::create_directory_symlink("../../../" + slot, root.path() / dir / "device");
    root.write(dir + "/operstate", "up\n");
    root.write(dir + "/statistics/rx_bytes", "7\n");
    root.write(dir + "/statistics/tx_bytes", "8\n");
  }
  auto counts = [&](const std::string& net_dev) {
    if (!net_dev.empty()) root.write("proc/net/dev", net_dev);
    host::Sources sources;
    sources.fs = std::make_shared<core::Fs>(root.path());
    host::Note note;
    auto n = host::read_network(sources, MachineSnapshot{}, note);
    EXPECT_TRUE(n);
    std::vector<std::pair<std::optional<std::uint64_t>, std::optional<std::uint64_t>>> out;
    for (const auto& i : n->interfaces)
      out.emplace_back(i.received_bytes, i.transmitted_bytes);
    return out;
  };
  const std::string head =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
      "drop fifo colls carrier compressed\n";
  using Counts = std::vector<std::pair<std::optional<std::uint64_t>, std::optional<std::uint64_t>>>;
  EXPECT_EQ(counts(""), (Counts{{7, 8}, {7, 8}}));  // a recorded host without it
  EXPECT_EQ(counts(head +
                   "    lo: 994434559 3141701 0 184 0 0 0 0 994434559 3141701 0 0 0 0 0 0\n"
                   "  eth0: 550170239   20244    0    0    0     0          0         0  1089817   "
                   "13356    0    0    0     0       0          0\n"),
            (Counts{{550170239, 1089817}, {7, 8}}));
  EXPECT_EQ(counts(head + "  eth0: 1 2 3\n  eth1: x 0 0 0 0 0 0 0 5 0 0 0 0 0 0 0\n" +
                   std::string(100, '\xff') + ":\n"),
            (Counts{{7, 8}, {7, 8}}));
}

// Which devices there are is found at a Machine's first snapshot, as its GPUs are; what they read
// moves at every snapshot.
TEST(Fabric, ValuesMoveBetweenSnapshotsOfOneMachine) {
  TempDir copy;
  std::filesystem::copy(
      fixture_host("hpc-fabric"), copy.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  Machine m(Machine::Options{.sysroot = copy.path()});
  auto first = m.snapshot({.toolchain = false});
  ASSERT_TRUE(first.infiniband) << first.infiniband.reason();
  ASSERT_EQ(first.infiniband->devices.size(), 4u);
  EXPECT_EQ(first.infiniband->devices[0].ports[0].state, "ACTIVE");
  copy.write(kPort + "state", "1: DOWN\n");
  copy.write(kPort + "phys_state", "2: Polling\n");
  copy.write(kPort + "counters/symbol_error", "12\n");
  copy.write(kPort + "counters/port_rcv_data", "1000\n");
  auto second = m.snapshot({.toolchain = false});
  ASSERT_TRUE(second.infiniband);
  const auto& port = second.infiniband->devices[0].ports[0];
  EXPECT_EQ(port.state, "DOWN");
  EXPECT_EQ(port.physical_state, "Polling");
  EXPECT_EQ(port.errors.at("symbol_error"), 12u);
  EXPECT_EQ(port.received_bytes, 4000u);
  EXPECT_EQ(second.infiniband->devices.size(), 4u);
}

TEST(Fabric, PciAddressBehindVmdAndVirtio) {
  // A NIC behind a VMD domain (five hex digits) and a virtio NIC, whose device is virtio0
  // below its PCI function.
  TempDir root;
  root.mkdir("sys/class/net");
  auto nic = [&](const std::string& name, const std::string& function, const std::string& sub) {
    std::string device = "sys/devices/" + function + sub;
    root.mkdir(device + "/net/" + name);
    std::filesystem::create_directory_symlink("../../" + device.substr(4) + "/net/" + name,
                                              root.path() / "sys/class/net" / name);
    std::filesystem::create_directory_symlink(
        sub.empty() ? "../../../" + function.substr(function.rfind('/') + 1) : "../../../virtio0",
        root.path() / device / "net" / name / "device");
  };
  nic("eth0", "pci10000:00/10000:00:02.0/10000:01:00.0", "");
  nic("eth1", "pci0000:00/0000:00:03.0", "/virtio0");
  // Under devices/virtual nothing is physical, whatever links it holds.
  root.mkdir("sys/devices/virtual/net/tap0");
  std::filesystem::create_directory_symlink("../../devices/virtual/net/tap0",
                                            root.path() / "sys/class/net/tap0");
  std::filesystem::create_directory_symlink("../../../../pci0000:00/0000:00:03.0",
                                            root.path() / "sys/devices/virtual/net/tap0/device");
  host::Sources sources;
  sources.fs = std::make_shared<core::Fs>(root.path());
  host::Note note;
  auto n = host::read_network(sources, MachineSnapshot{}, note);
  ASSERT_TRUE(n) << n.reason();
  ASSERT_EQ(n->interfaces.size(), 2u);
  EXPECT_EQ(n->interfaces[0].pci_address, "10000:01:00.0");
  EXPECT_EQ(n->interfaces[1].pci_address, "0000:00:03.0");
}

TEST(Fabric, DownAndDegradedPortsAreReadinessWarnings) {
  auto s = Machine(fixture_options("hpc-fabric")).snapshot({.toolchain = false});
  auto r = check_readiness(s, false);
  std::vector<const Finding*> fabric;
  for (const auto& f : r.findings)
    if (f.id.rfind("infiniband.", 0) == 0) fabric.push_back(&f);
  ASSERT_EQ(fabric.size(), 2u) << r.text();
  EXPECT_EQ(fabric[0]->id, "infiniband.port.down");
  EXPECT_EQ(fabric[0]->subject, "mlx5_1");
  EXPECT_EQ(fabric[0]->severity, Severity::warning);
  EXPECT_EQ(fabric[0]->reading, "port 1 DOWN, physical state Polling (InfiniBand)");
  EXPECT_EQ(fabric[1]->id, "infiniband.port.degraded");
  EXPECT_EQ(fabric[1]->subject, "mlx5_2");
  EXPECT_EQ(fabric[1]->severity, Severity::warning);
  EXPECT_EQ(fabric[1]->reading,
            "port 1 trained 1X HDR (50 Gb/s) (InfiniBand), where the other MT4123 ports run 4X");
  // A port slower than its width and speed carry; one linked up but not made active.
  s.infiniband->devices[0].ports[0].rate_gbps = 100;
  s.infiniband->devices[3].ports[0].state = "INIT";
  auto again = check_readiness(s, false);
  std::vector<std::string> seen;
  for (const auto& f : again.findings)
    if (f.id.rfind("infiniband.", 0) == 0) seen.push_back(f.subject + " " + f.reading);
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "mlx5_0 port 1 trained 4X HDR (100 Gb/s) (InfiniBand), where 4X HDR "
                      "carries 200 Gb/s",
                      "mlx5_1 port 1 DOWN, physical state Polling (InfiniBand)",
                      "mlx5_2 port 1 trained 1X HDR (50 Gb/s) (InfiniBand), where the other "
                      "MT4123 ports run 4X",
                      "mlx5_3 port 1 INIT, physical state LinkUp (Ethernet)"}));
  // No fabric, no finding (and no "unknown" warning: most hosts have none).
  auto vm =
      check_readiness(Machine(fixture_options("vm-cgroup1-nodmi")).snapshot({.toolchain = false}));
  for (const auto& f : vm.findings)
    EXPECT_EQ(f.id.find("infiniband"), std::string::npos) << f.id;
}

TEST(Fabric, MetricsUseNodeExporterNames) {
  Machine m(fixture_options("hpc-fabric"));
  serve::Exposition out;
  serve::expose(serve::read(m), out);
  auto text = out.text(serve::Format::prometheus);
  for (const char* line : {
           "mainboard_infiniband_info{device=\"mlx5_0\",board_id=\"MT_0000000223\","
           "firmware_version=\"20.39.1002\",hca_type=\"MT4123\"} 1",
           "mainboard_infiniband_state_id{device=\"mlx5_1\",port=\"1\"} 1",
           "mainboard_infiniband_physical_state_id{device=\"mlx5_1\",port=\"1\"} 2",
           "mainboard_infiniband_rate_bytes_per_second{device=\"mlx5_0\",port=\"1\"} 25000000000",
           "mainboard_infiniband_rate_bytes_per_second{device=\"mlx5_2\",port=\"1\"} 6250000000",
           "# TYPE mainboard_infiniband_port_data_received_bytes_total counter",
           "mainboard_infiniband_port_data_received_bytes_total{device=\"mlx5_0\",port=\"1\"} "
           "10000000000",
           "mainboard_infiniband_port_data_transmitted_bytes_total{device=\"mlx5_0\",port=\"1\"} "
           "5000000000",
           "mainboard_infiniband_link_downed_total{device=\"mlx5_0\",port=\"1\"} 1",
           "mainboard_infiniband_port_errors_received_total{device=\"mlx5_0\",port=\"1\"} 2",
           "mainboard_infiniband_symbol_error_total{device=\"mlx5_2\",port=\"1\"} 1520",
           "mainboard_infiniband_vl15_dropped_total{device=\"mlx5_0\",port=\"1\"} 0",
           "mainboard_infiniband_out_of_sequence_packets_received_total{device=\"mlx5_3\","
           "port=\"1\"} 17",
           "mainboard_network_info{device=\"eno1\",driver=\"ice\",address=\"b4:96:91:aa:bb:01\","
           "operstate=\"up\"} 1",
           "mainboard_network_up{device=\"eno1\"} 1",
           "mainboard_network_up{device=\"eno2\"} 0",
           "mainboard_network_speed_bytes{device=\"eno1\"} 3125000000",
           "mainboard_network_mtu_bytes{device=\"eno1\"} 9000",
           "mainboard_network_receive_bytes_total{device=\"eno1\"} 123456789012",
           "mainboard_network_transmit_bytes_total{device=\"eno1\"} 98765432109",
       })
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  // A down link has no speed series; virtual interfaces have none at all.
  EXPECT_EQ(text.find("mainboard_network_speed_bytes{device=\"eno2\"}"), std::string::npos);
  EXPECT_EQ(text.find("device=\"docker0\""), std::string::npos);
  EXPECT_EQ(text.find("reading=\"infiniband\""), std::string::npos);
  Machine vm(fixture_options("vm-cgroup1-nodmi"));
  serve::Exposition none;
  serve::expose(serve::read(vm), none);
  auto ntext = none.text(serve::Format::prometheus);
  EXPECT_EQ(ntext.find("mainboard_infiniband_"), std::string::npos);
  EXPECT_NE(ntext.find("mainboard_reading_unavailable{unit=\"host\",reading=\"infiniband\","
                       "reason=\"no InfiniBand or RoCE devices (no /sys/class/infiniband)\"} 1"),
            std::string::npos)
      << ntext;
  EXPECT_NE(ntext.find("reading=\"network\""), std::string::npos);
}

TEST(Fabric, SummaryLines) {
  auto s = Machine(fixture_options("hpc-fabric")).snapshot({.toolchain = false});
  auto text = view::render_summary(s, view::Style{});
  EXPECT_NE(text.find("Fabric   mlx5_0 200 Gb/s 4X HDR · mlx5_1 DOWN (Polling) · mlx5_2 50 Gb/s "
                      "1X HDR · mlx5_3 RoCE 200 Gb/s 4X HDR\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Network  eno1 25 Gb/s ice · eno2 down ice · ens6f0np0 200 Gb/s mlx5_core\n"),
            std::string::npos)
      << text;
  auto vm = view::render_summary(
      Machine(fixture_options("vm-cgroup1-nodmi")).snapshot({.toolchain = false}), view::Style{});
  EXPECT_EQ(vm.find("Fabric"), std::string::npos);
  EXPECT_EQ(vm.find("Network"), std::string::npos);
}

// Gathering a recorded host again keeps what the fabric probes read: the class entries' links,
// the device and driver links, and the files behind them.
TEST(Fabric, GatheredHostReadsTheSame) {
  TempDir dir;
  auto tree = dir.path() / "host";
  gather_host(tree, {.sysroot = fixture_host("hpc-fabric"), .hostname = "again"});
  auto a = Machine(fixture_options("hpc-fabric")).snapshot({.toolchain = false});
  Machine::Options o;
  o.sysroot = tree;
  auto b = Machine(o).snapshot({.toolchain = false});
  ASSERT_TRUE(b.infiniband) << b.infiniband.reason();
  EXPECT_EQ(b.infiniband, a.infiniband);
  ASSERT_TRUE(b.network) << b.network.reason();
  EXPECT_EQ(b.network, a.network);
  EXPECT_TRUE(std::filesystem::is_symlink(tree / "sys/class/infiniband/mlx5_0"));
  EXPECT_TRUE(std::filesystem::is_symlink(
      tree / "sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/driver"));
}
