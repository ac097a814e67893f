// The PCI topology probe (sysfs alone) and the path matrix drawn from it, as `nvidia-smi topo -m`
// names paths: the recorded DGX-like host with its matrix derived by hand, malformed trees, the
// readiness rule and the schematic's nearest adapters.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/fs.hpp"
#include "fake_gpus.hpp"
#include "fixture_machine.hpp"
#include "host/note.hpp"
#include "host/readers.hpp"
#include "mainboard/check.hpp"
#include "mainboard/gather.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/topology_matrix.hpp"
#include "mainboard/view.hpp"
#include "test_util.hpp"
#include "view/topology_text.hpp"

using namespace mainboard;

namespace {

std::vector<std::string> topo_words(const std::string& row) {
  std::istringstream in(row);
  std::vector<std::string> out;
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

/// The matrix as its names, a row a string.
std::vector<std::string> topo_rows(const TopologyMatrix& m) {
  std::vector<std::string> out;
  for (const auto& row : m.cells) {
    std::string line;
    for (const auto& c : row)
      line += (line.empty() ? "" : " ") + to_string(c);
    out.push_back(line);
  }
  return out;
}

/// A sysfs tree built in a test: PCI functions under /sys/devices, linked from
/// /sys/bus/pci/devices as the kernel links them.
struct PciTree {
  TempDir dir;
  /// A function at `path` ("pci0000:00/0000:00:01.0/0000:01:00.0") with these files; linked.
  std::string add(const std::string& path, const std::map<std::string, std::string>& files) {
    std::string d = "sys/devices/" + path;
    dir.mkdir(d);
    for (const auto& [name, text] : files)
      dir.write(d + "/" + name, text);
    auto address = path.substr(path.rfind('/') + 1);
    link(address, "../../../devices/" + path);
    return d;
  }
  void link(const std::string& address, const std::string& target) {
    dir.mkdir("sys/bus/pci/devices");
    std::filesystem::create_symlink(target, dir.path() / "sys/bus/pci/devices" / address);
  }
  Reading<PciTopology> read(host::Note& note) const {
    host::Sources sources;
    sources.fs = std::make_shared<core::Fs>(dir.path());
    return host::read_pci(sources, MachineSnapshot{}, note);
  }
};

const std::map<std::string, std::string> kTopoGpu = {{"class", "0x030200\n"},
                                                     {"vendor", "0x10de\n"},
                                                     {"device", "0x2330\n"},
                                                     {"numa_node", "0\n"},
                                                     {"local_cpulist", "0-7\n"}};

PciDevice topo_device(std::string name, std::string kind, std::string address,
                      std::string host_bridge, std::vector<std::string> bridges,
                      std::optional<std::int32_t> numa) {
  PciDevice d;
  d.name = std::move(name);
  d.kind = std::move(kind);
  d.address = std::move(address);
  d.host_bridge = std::move(host_bridge);
  d.bridges = std::move(bridges);
  d.numa_node = numa;
  return d;
}

}  // namespace

TEST(PciTopology, ReadsTheDgxLikeHost) {
  Machine machine(fixture_options("dgx-8gpu"));
  auto snap = machine.reading("pci");
  ASSERT_TRUE(snap.pci) << snap.pci.reason();
  const auto& d = snap.pci->devices;
  std::vector<std::string> names, kinds;
  for (const auto& dev : d) {
    names.push_back(dev.name);
    kinds.push_back(dev.kind);
  }
  // GPUs by address, then the HCAs, then the drives; the BMC's VGA and the bridges are left out.
  EXPECT_EQ(names, (std::vector<std::string>{"GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6",
                                             "GPU7", "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3",
                                             "nvme0", "nvme1"}));
  EXPECT_EQ(kinds[0], "gpu");
  EXPECT_EQ(kinds[8], "infiniband");
  EXPECT_EQ(kinds[12], "nvme");
  EXPECT_EQ(d[0].address, "0000:13:00.0");
  EXPECT_EQ(d[7].address, "0000:b4:00.0");
  EXPECT_EQ(d[0].vendor_id, "0x10de");
  EXPECT_EQ(d[0].device_id, "0x2330");
  EXPECT_EQ(d[0].driver, "nvidia");
  EXPECT_EQ(d[8].driver, "mlx5_core");
  EXPECT_EQ(d[8].vendor_id, "0x15b3");
  EXPECT_EQ(d[0].numa_node, 0);
  EXPECT_EQ(d[4].numa_node, 1);
  EXPECT_EQ(d[0].cpus, (std::vector<std::uint32_t>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(d[0].host_bridge, "pci0000:10");
  EXPECT_EQ(d[0].bridges,
            (std::vector<std::string>{"0000:10:01.0", "0000:11:00.0", "0000:12:00.0"}));
  EXPECT_EQ(pci_switches(d[0]), std::vector<std::string>{"0000:11:00.0"});
  EXPECT_EQ(d[12].bridges, std::vector<std::string>{"0000:50:01.0"});
  EXPECT_TRUE(pci_switches(d[12]).empty());
}

// Derived by hand from the fixture's layout (generate.py, dgx_8gpu): GPU pairs and their HCA
// share a switch (PIX); the other switch of the same socket is another host bridge (NODE); the
// other socket is SYS; the two drives hang from two root ports of one host bridge (PHB).
TEST(PciTopology, TheDgxLikeHostsMatrixIsNvidiaSmis) {
  Machine machine(fixture_options("dgx-8gpu"));
  auto pci = machine.reading("pci").pci;
  ASSERT_TRUE(pci) << pci.reason();
  auto m = topology_matrix(*pci, {}, machine.reading("cpu").cpu.info.numa_nodes);
  std::vector<std::string> expected = {
      // GPU0 GPU1 GPU2 GPU3 GPU4 GPU5 GPU6 GPU7 mlx5_0 mlx5_1 mlx5_2 mlx5_3 nvme0 nvme1
      "X PIX NODE NODE SYS SYS SYS SYS PIX NODE SYS SYS NODE NODE",   // GPU0
      "PIX X NODE NODE SYS SYS SYS SYS PIX NODE SYS SYS NODE NODE",   // GPU1
      "NODE NODE X PIX SYS SYS SYS SYS NODE PIX SYS SYS NODE NODE",   // GPU2
      "NODE NODE PIX X SYS SYS SYS SYS NODE PIX SYS SYS NODE NODE",   // GPU3
      "SYS SYS SYS SYS X PIX NODE NODE SYS SYS PIX NODE SYS SYS",     // GPU4
      "SYS SYS SYS SYS PIX X NODE NODE SYS SYS PIX NODE SYS SYS",     // GPU5
      "SYS SYS SYS SYS NODE NODE X PIX SYS SYS NODE PIX SYS SYS",     // GPU6
      "SYS SYS SYS SYS NODE NODE PIX X SYS SYS NODE PIX SYS SYS",     // GPU7
      "PIX PIX NODE NODE SYS SYS SYS SYS X NODE SYS SYS NODE NODE",   // mlx5_0
      "NODE NODE PIX PIX SYS SYS SYS SYS NODE X SYS SYS NODE NODE",   // mlx5_1
      "SYS SYS SYS SYS PIX PIX NODE NODE SYS SYS X NODE SYS SYS",     // mlx5_2
      "SYS SYS SYS SYS NODE NODE PIX PIX SYS SYS NODE X SYS SYS",     // mlx5_3
      "NODE NODE NODE NODE SYS SYS SYS SYS NODE NODE SYS SYS X PHB",  // nvme0
      "NODE NODE NODE NODE SYS SYS SYS SYS NODE NODE SYS SYS PHB X",  // nvme1
  };
  EXPECT_EQ(topo_rows(m), expected);
  auto near = nearest_nics(m);
  ASSERT_EQ(near.size(), 8u);
  EXPECT_EQ(near[0].nic, "mlx5_0");
  EXPECT_EQ(near[3].nic, "mlx5_1");
  EXPECT_EQ(near[7].nic, "mlx5_3");
  EXPECT_EQ(to_string(near[7].path), "PIX");
}

TEST(PciTopology, TheTextIsNvidiaSmisTableWithAffinities) {
  Machine machine(fixture_options("dgx-8gpu"));
  auto m = topology_matrix(machine.reading("pci").pci.or_empty(), {}, 2);
  auto text = view::render_topology(m, view::Style{false});
  std::istringstream in(text);
  std::string header, gpu0;
  std::getline(in, header);
  std::getline(in, gpu0);
  auto h = topo_words(header);
  ASSERT_GE(h.size(), 3u);
  EXPECT_EQ(h.front(), "GPU0");
  EXPECT_NE(header.find("CPU Affinity  NUMA Affinity"), std::string::npos) << header;
  EXPECT_EQ(topo_words(gpu0),
            topo_words("GPU0 X PIX NODE NODE SYS SYS SYS SYS PIX NODE SYS SYS NODE NODE "
                       "0-3,8-11 0"));
  EXPECT_NE(text.find("  PIX  = Connection traversing at most a single PCIe bridge"),
            std::string::npos);
  EXPECT_NE(text.find("  mlx5_0: infiniband at 0000:15:00.0"), std::string::npos) << text;
}

// What `mainboard gather` records of the fixture (the links among it) reads back the same.
TEST(PciTopology, AGatheredHostReadsTheSame) {
  TempDir dir;
  gather_host(dir.path() / "host", {.sysroot = fixture_host("dgx-8gpu"), .hostname = "x"});
  Machine original(fixture_options("dgx-8gpu"));
  Machine::Options o;
  o.sysroot = dir.path() / "host";
  Machine replay(o);
  auto a = original.reading("pci").pci, b = replay.reading("pci").pci;
  ASSERT_TRUE(a) << a.reason();
  ASSERT_TRUE(b) << b.reason();
  EXPECT_EQ(nlohmann::json(*b), nlohmann::json(*a));
  // The kernel's links, recorded as links.
  EXPECT_TRUE(std::filesystem::is_symlink(dir.path() / "host/sys/bus/pci/devices/0000:13:00.0"));
}

TEST(PciTopology, PathsBetweenSwitchesAndHostBridges) {
  // Two switches stacked under one root port: below the lower one, PIX; one below the upper
  // switch only, PXB to them; another root port of the same host bridge, PHB.
  auto a = topo_device(
      "GPU0", "gpu", "0000:25:00.0", "pci0000:20",
      {"0000:20:01.0", "0000:21:00.0", "0000:22:00.0", "0000:23:00.0", "0000:24:00.0"}, 0);
  auto b = a;
  b.address = "0000:26:00.0";
  b.bridges.back() = "0000:24:01.0";
  auto nic = topo_device("eth", "ethernet", "0000:27:00.0", "pci0000:20",
                         {"0000:20:01.0", "0000:21:00.0", "0000:22:01.0"}, 0);
  auto other = topo_device("nvme0", "nvme", "0000:28:00.0", "pci0000:20", {"0000:20:02.0"}, 0);
  EXPECT_EQ(to_string(pci_path(a, a)), "X");
  EXPECT_EQ(to_string(pci_path(a, b)), "PIX");
  EXPECT_EQ(to_string(pci_path(a, nic)), "PXB");
  EXPECT_EQ(to_string(pci_path(nic, a)), "PXB");
  EXPECT_EQ(to_string(pci_path(a, other)), "PHB");
  // Across host bridges, the NUMA nodes decide; where one is not known, only a host with a
  // single NUMA node can say NODE.
  auto far = topo_device("GPU1", "gpu", "0000:a2:00.0", "pci0000:a0", {"0000:a0:02.0"}, 1);
  EXPECT_EQ(to_string(pci_path(a, far, 2)), "SYS");
  far.numa_node = 0;
  EXPECT_EQ(to_string(pci_path(a, far, 2)), "NODE");
  far.numa_node.reset();
  EXPECT_EQ(to_string(pci_path(a, far, 2)), "N/A");
  EXPECT_EQ(to_string(pci_path(a, far, 0)), "N/A");
  EXPECT_EQ(to_string(pci_path(a, far, 1)), "NODE");
}

TEST(PciTopology, NvLinkBetweenGpusWinsOverPcie) {
  PciTopology t;
  t.devices = {
      topo_device("GPU0", "gpu", "0000:13:00.0", "pci0000:10", {"0000:10:01.0"}, 0),
      topo_device("GPU1", "gpu", "0000:93:00.0", "pci0000:90", {"0000:90:01.0"}, 1),
      topo_device("mlx5_0", "infiniband", "0000:95:00.0", "pci0000:90", {"0000:90:02.0"}, 1)};
  auto m = topology_matrix(t, {{{"0000:13:00.0", "0000:93:00.0"}, 18}}, 2);
  EXPECT_EQ(topo_rows(m), (std::vector<std::string>{"X NV18 SYS", "NV18 X PHB", "SYS PHB X"}));
}

namespace {
GpuSnapshot topo_gpu(
    const std::string& bus_id,
    const std::vector<std::tuple<bool, std::optional<std::string>, std::optional<std::string>>>&
        links) {
  GpuSnapshot g;
  g.info.pci_bus_id = bus_id;
  g.health = GpuHealth{};
  for (const auto& [active, remote, kind] : links) {
    GpuLink l;
    l.link = static_cast<std::uint32_t>(g.health->links.size());
    l.active = active;
    l.remote_pci_bus_id = remote;
    l.remote_kind = kind;
    g.health->links.push_back(l);
  }
  return g;
}
}  // namespace

// What each GPU's NVLinks reach, as NVML tells it, into links per pair: bridged pairs, GPUs
// behind NVSwitches, links down, links whose far end is not told.
TEST(PciTopology, NvLinkCountsFromWhatEachLinkReaches) {
  using L = std::tuple<bool, std::optional<std::string>, std::optional<std::string>>;
  const std::string gpu = "gpu", sw = "switch";
  // Two bridged pairs (4 links each), as NVML names addresses; GPU1 cannot say where one of
  // its links goes, GPU3 has one link down: the pair counts what the better side saw.
  std::vector<GpuSnapshot> bridged = {
      topo_gpu("00000000:13:00.0",
               {L{true, "00000000:14:00.0", gpu}, L{true, "00000000:14:00.0", gpu},
                L{true, "00000000:14:00.0", gpu}, L{true, "00000000:14:00.0", gpu}}),
      topo_gpu("00000000:14:00.0",
               {L{true, "00000000:13:00.0", gpu}, L{true, "00000000:13:00.0", gpu},
                L{true, "00000000:13:00.0", gpu}, L{true, std::nullopt, std::nullopt}}),
      topo_gpu("0000:33:00.0", {L{true, "0000:34:00.0", std::nullopt}, L{true, "0000:34:00.0", gpu},
                                L{true, "0000:34:00.0", gpu}}),
      topo_gpu("0000:34:00.0", {L{true, "0000:33:00.0", gpu}, L{true, "0000:33:00.0", gpu},
                                L{true, "0000:33:00.0", gpu}, L{false, "0000:33:00.0", gpu}})};
  EXPECT_EQ(nvlink_counts(bridged), (NvLinkCounts{{{"0000:13:00.0", "0000:14:00.0"}, 4},
                                                  {{"0000:33:00.0", "0000:34:00.0"}, 3}}));
  // Behind NVSwitches: every pair, by the fewer of the two. Of GPU D3's links only the one NVML
  // calls a switch's counts (its address untold): not the IBM NPU's, not one of unknown kind.
  // A GPU without link readings joins nothing.
  std::vector<GpuSnapshot> switched = {
      topo_gpu("00000000:13:00.0",
               {L{true, "00000000:C1:00.0", sw}, L{true, "00000000:C2:00.0", sw},
                L{true, "00000000:C3:00.0", sw}}),
      topo_gpu("00000000:93:00.0",
               {L{true, "00000000:C1:00.0", sw}, L{true, "00000000:C2:00.0", sw},
                L{false, "00000000:C3:00.0", sw}}),
      topo_gpu("00000000:B3:00.0",
               {L{true, "00000000:C1:00.0", sw}, L{true, "00000000:C2:00.0", sw},
                L{true, "00000000:C3:00.0", sw}}),
      topo_gpu("00000000:D3:00.0", {L{true, "00000000:04:00.0", "npu"}, L{true, std::nullopt, sw},
                                    L{true, "00000000:05:00.0", std::nullopt}})};
  GpuSnapshot unread;
  unread.info.pci_bus_id = "00000000:E3:00.0";
  switched.push_back(unread);
  EXPECT_EQ(nvlink_counts(switched), (NvLinkCounts{{{"0000:13:00.0", "0000:93:00.0"}, 2},
                                                   {{"0000:13:00.0", "0000:b3:00.0"}, 3},
                                                   {{"0000:93:00.0", "0000:b3:00.0"}, 2},
                                                   {{"0000:13:00.0", "0000:d3:00.0"}, 1},
                                                   {{"0000:93:00.0", "0000:d3:00.0"}, 1},
                                                   {{"0000:b3:00.0", "0000:d3:00.0"}, 1}}));
  // A GPU named by its own links, or by an address that is none: nothing.
  EXPECT_TRUE(nvlink_counts({topo_gpu("0000:13:00.0", {L{true, "0000:13:00.0", gpu}}),
                             topo_gpu("garbage", {L{true, "0000:13:00.0", gpu}})})
                  .empty());
}

TEST(PciTopology, PciAddressesAsSysfsWritesThem) {
  EXPECT_EQ(sysfs_pci_address("00000000:13:00.0"), "0000:13:00.0");
  EXPECT_EQ(sysfs_pci_address("0000:B3:00.0"), "0000:b3:00.0");
  EXPECT_EQ(sysfs_pci_address("00010000:01:00.0"), "10000:01:00.0");  // a VMD domain
  for (const char* bad :
       {"", ":", "13:00.0", "0000:13:00", "0000:13:00.8", "0000:13:20.0", "0000:1g:00.0",
        "000000000:13:00.0", "0x00:13:00.0", "0000:13:00.0 ", "-0000:13:00.0"})
    EXPECT_EQ(sysfs_pci_address(bad), "") << bad;
}

// The dgx-8gpu host with the GPUs NVML reports on it (the fake NVML's dgx-h100 scenario): every
// GPU reaches the four NVSwitches with 18 links, GPU3 with 17.
TEST(PciTopology, NvSwitchedGpusAreNv18AsNvidiaSmiPrintsThem) {
  FakeGpus fake("dgx-h100");
  Machine::Options o = fixture_options("dgx-8gpu");
  o.environment = fake.env;
  Machine machine(o);
  auto s = machine.snapshot({.toolchain = false});
  ASSERT_EQ(s.gpus.size(), 8u);
  ASSERT_TRUE(s.gpus[0].health);
  ASSERT_EQ(s.gpus[0].health->links.size(), 18u);
  EXPECT_EQ(s.gpus[0].health->links[0].remote_pci_bus_id, "00000000:C1:00.0");
  EXPECT_EQ(s.gpus[0].health->links[0].remote_kind, "switch");
  EXPECT_EQ(s.gpus[0].health->links[17].remote_pci_bus_id, "00000000:C4:00.0");
  ASSERT_TRUE(s.pci) << s.pci.reason();
  auto m = topology_matrix(*s.pci, nvlink_counts(s.gpus), s.cpu.info.numa_nodes);
  auto rows = topo_rows(m);
  ASSERT_EQ(rows.size(), 14u);
  EXPECT_EQ(rows[0], "X NV18 NV18 NV17 NV18 NV18 NV18 NV18 PIX NODE SYS SYS NODE NODE");
  EXPECT_EQ(rows[3], "NV17 NV17 NV17 X NV17 NV17 NV17 NV17 NODE PIX SYS SYS NODE NODE");
  EXPECT_EQ(rows[8], "PIX PIX NODE NODE SYS SYS SYS SYS X NODE SYS SYS NODE NODE");
  // The adapters nearest the GPUs, and the readiness rule, are what PCIe says.
  EXPECT_EQ(nearest_nics(m)[3].nic, "mlx5_1");
  nlohmann::json j = s;
  EXPECT_EQ(j["gpus"][0]["health"]["links"][0]["remote_kind"], "switch");
  EXPECT_EQ(j.get<MachineSnapshot>().gpus[0].health, s.gpus[0].health);
}

TEST(PciTopology, MalformedDevicesAreSkippedWithAReason) {
  PciTree t;
  // A GPU that reads well but for its NUMA node: missing, -1, garbage, huge.
  auto ok = kTopoGpu;
  ok.erase("numa_node");
  t.add("pci0000:00/0000:00:01.0/0000:01:00.0", ok);
  ok["numa_node"] = "-1\n";
  t.add("pci0000:00/0000:00:02.0/0000:02:00.0", ok);
  ok["numa_node"] = "zero\n";
  ok["local_cpulist"] = "0-zz\n";
  t.add("pci0000:00/0000:00:03.0/0000:03:00.0", ok);
  ok["numa_node"] = "99999999999999999999999\n";
  ok["local_cpulist"] = "";
  t.add("pci0000:00/0000:00:04.0/0000:04:00.0", ok);
  // A garbage class, an empty one, a huge one, a FIFO for one.
  auto bad = kTopoGpu;
  bad["class"] = "display\n";
  t.add("pci0000:00/0000:00:05.0/0000:05:00.0", bad);
  bad["class"] = "";
  t.add("pci0000:00/0000:00:06.0/0000:06:00.0", bad);
  bad["class"] = "0xffffffffffffffffffff\n";
  t.add("pci0000:00/0000:00:07.0/0000:07:00.0", bad);
  bad.erase("class");
  auto fifo_dir = t.add("pci0000:00/0000:00:08.0/0000:08:00.0", bad);
  ASSERT_EQ(::mkfifo((t.dir.path() / fifo_dir / "class").c_str(), 0600), 0);
  // A dangling link, a directory where a link should be, a link that names another function,
  // a link straight under /sys/devices, and a name that is no PCI address.
  t.link("0000:09:00.0", "../../../devices/pci0000:00/0000:00:09.0/0000:09:00.0");
  t.dir.write("sys/bus/pci/devices/0000:0a:00.0/class", "0x030200\n");
  t.link("0000:0b:00.0", "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");
  t.dir.write("sys/devices/0000:0c:00.0/class", "0x030200\n");
  t.link("0000:0c:00.0", "../../../devices/0000:0c:00.0");
  t.link("garbage", "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");

  host::Note note;
  auto r = t.read(note);
  ASSERT_TRUE(r) << r.reason();
  ASSERT_EQ(r->devices.size(), 4u);
  for (const auto& d : r->devices)
    EXPECT_FALSE(d.numa_node) << d.address;  // unknown, never 0
  EXPECT_EQ(r->devices[0].cpus, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(r->devices[2].cpus.empty());
  EXPECT_TRUE(r->devices[3].cpus.empty());
  EXPECT_EQ(r->devices[0].name, "GPU0");
  EXPECT_EQ(r->devices[0].driver, "");  // no driver link: none bound
  for (const char* why :
       {"0000:05:00.0 (class not a number)", "0000:06:00.0 (class not a number)",
        "0000:07:00.0 (class not a number)", "0000:08:00.0 (no class)", "0000:09:00.0 (no class)",
        "0000:0a:00.0 (not a link into the device tree)",
        "0000:0b:00.0 (its link does not end in its address)",
        "0000:0c:00.0 (no host bridge above it in its link)"})
    EXPECT_NE(note.reason.find(why), std::string::npos) << why << " in: " << note.reason;
  // Two root ports of one host bridge: no NUMA node is needed to name that path.
  auto m = topology_matrix(*r, {}, 2);
  EXPECT_EQ(to_string(m.cells[0][1]), "PHB");
}

TEST(PciTopology, NoPciBusIsUnsupportedWithAReason) {
  TempDir empty;
  host::Sources sources;
  sources.fs = std::make_shared<core::Fs>(empty.path());
  host::Note note;
  auto r = host::read_pci(sources, MachineSnapshot{}, note);
  EXPECT_FALSE(r);
  EXPECT_NE(r.reason().find("no /sys/bus/pci/devices"), std::string::npos) << r.reason();
  EXPECT_EQ(note.status, ProbeStatus::unsupported);
  empty.mkdir("sys/bus/pci/devices");
  host::Note again;
  auto listed = host::read_pci(sources, MachineSnapshot{}, again);
  EXPECT_FALSE(listed);
  EXPECT_NE(listed.reason().find("lists no device"), std::string::npos) << listed.reason();
}

TEST(PciTopology, RoceAndEthernetAdaptersAreNamedAsTheirDriversNameThem) {
  PciTree t;
  auto d = t.add("pci0000:a0/0000:a0:01.0/0000:a1:00.0",
                 {{"class", "0x020000\n"}, {"vendor", "0x15b3\n"}, {"numa_node", "1\n"}});
  t.dir.mkdir(d + "/infiniband/mlx5_0");
  t.dir.mkdir(d + "/net/ens1f0np0");
  auto e = t.add("pci0000:20/0000:20:01.0/0000:27:00.0",
                 {{"class", "0x020000\n"}, {"vendor", "0x8086\n"}});
  t.dir.mkdir(e + "/net/enp39s0");
  t.add("pci0000:20/0000:20:02.0/0000:28:00.0", {{"class", "0x010802\n"}});  // no nvme/ yet
  auto v = t.add("pci0000:00/0000:00:03.0", {{"class", "0x020000\n"}, {"vendor", "0x1af4\n"}});
  t.dir.mkdir(v + "/virtio0/net/eth0");  // a virtio adapter's interface is one level down
  host::Note note;
  auto r = t.read(note);
  ASSERT_TRUE(r) << r.reason();
  ASSERT_EQ(r->devices.size(), 4u);
  EXPECT_EQ(r->devices[0].name, "eth0");
  EXPECT_TRUE(r->devices[0].bridges.empty());  // straight on the host bridge
  EXPECT_EQ(r->devices[0].host_bridge, "pci0000:00");
  EXPECT_EQ(r->devices[1].name, "enp39s0");
  EXPECT_EQ(r->devices[1].kind, "ethernet");
  EXPECT_FALSE(is_rdma_nic(r->devices[1]));
  EXPECT_EQ(r->devices[2].name, "mlx5_0");
  EXPECT_EQ(r->devices[2].kind, "roce");
  EXPECT_TRUE(is_rdma_nic(r->devices[2]));
  EXPECT_EQ(r->devices[3].name, "0000:28:00.0");  // no controller name: its address
}

TEST(PciTopology, CheckWarnsWhenAGpusOnlyRdmaAdapterIsAcrossTheSockets) {
  auto findings = [](const std::string& host) {
    Machine machine(fixture_options(host));
    std::vector<std::string> out;
    for (const auto& f : check_readiness(machine.snapshot({.toolchain = false})).findings)
      if (f.id == "topology.gpu_nic.remote") out.push_back(f.subject + ": " + f.reading);
    return out;
  };
  EXPECT_EQ(findings("gpu-nic-remote"),
            (std::vector<std::string>{"GPU0: nearest RDMA adapter mlx5_0 is SYS (across the "
                                      "sockets)",
                                      "GPU1: nearest RDMA adapter mlx5_0 is SYS (across the "
                                      "sockets)"}));
  EXPECT_TRUE(findings("dgx-8gpu").empty());
}

TEST(PciTopology, TheSchematicNamesEachGpusNearestAdapter) {
  Machine machine(fixture_options("gpu-nic-remote"));
  auto text = MachineView::of(machine).render({.color = false, .width = 100});
  EXPECT_NE(text.find("Nearest NIC: GPU0 ↔ enp39s0 PXB · GPU1 ↔ enp39s0 PXB · GPU2 ↔ mlx5_0 PHB"),
            std::string::npos)
      << text;
}
