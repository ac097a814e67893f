// The machine probed over each fixture host: every value below is what that host's files say
// (see tests/fixtures/hosts/generate.py, which writes them).
#include <gtest/gtest.h>

#include "core/text.hpp"
#include "fixture_machine.hpp"
#include "mainboard/error.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/view.hpp"
#include "test_util.hpp"
#include "view/summary.hpp"

using namespace mainboard;

namespace {

const ScratchCandidate* candidate(const Scratch& s, const std::string& path) {
  for (const auto& c : s.candidates)
    if (c.path == path) return &c;
  return nullptr;
}

}  // namespace

TEST(FixtureHosts, CloudVmWithCgroupV1AndNoDmi) {
  auto s = fixture_snapshot("vm-cgroup1-nodmi");
  EXPECT_EQ(s.hostname, "vm");
  const auto& cpu = s.cpu.info;
  EXPECT_EQ(cpu.label, "AMD EPYC");
  EXPECT_EQ(cpu.vendor, "AMD");
  EXPECT_EQ(cpu.architecture, "x86_64");
  EXPECT_EQ(cpu.microarchitecture, "Zen 4");
  EXPECT_EQ(cpu.topology_source, mainboard::TopologySource::hwloc);
  EXPECT_EQ(cpu.packages, 1u);
  EXPECT_EQ(cpu.cores, 2u);
  EXPECT_EQ(cpu.threads, 2u);
  EXPECT_EQ(cpu.numa_nodes, 1u);
  EXPECT_EQ(cpu.cache_bytes(1, "data"), 32u * 1024);
  EXPECT_EQ(cpu.cache_bytes(1, "instruction"), 32u * 1024);
  EXPECT_EQ(cpu.cache_bytes(2, "unified"), 1024u * 1024);
  EXPECT_EQ(cpu.cache_bytes(3, "unified"), 32u * 1024 * 1024);
  ASSERT_EQ(s.cpu.clocks.size(), 1u);
  EXPECT_EQ(s.cpu.clocks[0].source, "/proc/cpuinfo");
  EXPECT_DOUBLE_EQ(*s.cpu.clocks[0].current_mhz, 2596.142);
  EXPECT_DOUBLE_EQ(*s.cpu.load_1m, 0.76);

  EXPECT_TRUE(s.memory.ok());
  EXPECT_EQ(s.memory->total_bytes, 24684084ull * 1024);
  EXPECT_EQ(s.memory->used_bytes, (24684084ull - 24346384ull) * 1024);
  EXPECT_EQ(s.memory_hardware.swap_total_bytes, 0u);
  EXPECT_FALSE(s.memory_hardware.cards);
  EXPECT_EQ(s.memory_hardware.slots_total(), 0u);
  // No SMBIOS table on this VM: dmidecode (on its PATH) is not started for nothing.
  EXPECT_NE(s.memory_hardware.cards.reason().find("no SMBIOS table"), std::string::npos)
      << s.memory_hardware.cards.reason();

  ASSERT_TRUE(s.cgroup_memory);
  EXPECT_EQ(s.cgroup_memory->version, 1);
  EXPECT_FALSE(s.cgroup_memory->capped());  // the v1 "unlimited" sentinel
  EXPECT_EQ(s.cgroup_memory->usage_bytes, 748314624u);

  EXPECT_FALSE(s.board);
  EXPECT_NE(s.board.reason().find("no /sys/class/dmi/id"), std::string::npos) << s.board.reason();
  EXPECT_EQ(s.diagnostic("board")->status, ProbeStatus::unsupported);
  EXPECT_EQ(s.diagnostic("board")->reason, s.board.reason());

  EXPECT_EQ(s.environment.user, "root");
  EXPECT_FALSE(s.environment.scheduler);
  EXPECT_FALSE(s.environment.job);

  ASSERT_TRUE(s.toolchain);
  ASSERT_EQ(s.toolchain->tools.size(), 3u);
  EXPECT_EQ(s.toolchain->find("gcc")->version, "12.2.0");
  EXPECT_EQ(s.toolchain->find("cmake")->version, "3.25.1");
  EXPECT_EQ(s.toolchain->find("python")->version, "3.11.2");
  EXPECT_EQ(s.compilers.c_compiler, "/usr/bin/gcc");
  EXPECT_FALSE(s.compilers.cxx_compiler);

  ASSERT_EQ(s.disk.devices.size(), 1u);  // loop0 is not storage
  EXPECT_EQ(s.disk.devices[0].name, "vda");
  EXPECT_EQ(s.disk.devices[0].rotational, true);
  EXPECT_TRUE(s.scratch.found);
  EXPECT_EQ(s.scratch.path, "/dev/shm");
  EXPECT_EQ(s.scratch.tier, StorageTier::memory);
  EXPECT_EQ(s.scratch.free_bytes, 25276502016u);
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_EQ(s.unit_count(), 1u);
}

TEST(FixtureHosts, SlurmJobWithCgroupV2Cap) {
  auto s = fixture_snapshot("cgroup2-capped");
  ASSERT_TRUE(s.os);
  EXPECT_EQ(s.os->name, "Rocky Linux 9.3 (Blue Onyx)");
  EXPECT_EQ(s.os->id, "rocky");
  EXPECT_EQ(s.os->version_id, "9.3");
  EXPECT_EQ(s.os->kernel, "5.14.0-362.8.1.el9_3.x86_64");
  EXPECT_EQ(s.os->libc, "glibc 2.34");
  const auto& cpu = s.cpu.info;
  EXPECT_EQ(cpu.label, "Intel(R) Xeon(R) w5-3435X");
  EXPECT_EQ(cpu.microarchitecture, "Sapphire Rapids");
  EXPECT_EQ(cpu.packages, 1u);
  EXPECT_EQ(cpu.cores, 4u);
  EXPECT_EQ(cpu.threads, 8u);
  EXPECT_EQ(cpu.cache_bytes(1, "data"), 48u * 1024);
  EXPECT_EQ(cpu.cache_bytes(3, "unified"), 23040u * 1024);
  auto amx = std::find(cpu.isa_extensions.begin(), cpu.isa_extensions.end(), "amx_tile");
  EXPECT_NE(amx, cpu.isa_extensions.end());
  ASSERT_EQ(s.cpu.clocks.size(), 1u);
  EXPECT_EQ(s.cpu.clocks[0].domain, "cpu0-7");
  EXPECT_DOUBLE_EQ(*s.cpu.clocks[0].current_mhz, 3000);
  EXPECT_DOUBLE_EQ(*s.cpu.clocks[0].min_mhz, 800);
  EXPECT_DOUBLE_EQ(*s.cpu.clocks[0].max_mhz, 4700);

  EXPECT_EQ(s.memory->total_bytes, 65536000ull * 1024);
  EXPECT_EQ(s.memory->used_bytes, 16ull << 30);
  EXPECT_EQ(s.memory_hardware.swap_total_bytes, 8ull << 30);
  EXPECT_EQ(s.memory_hardware.swap_used_bytes, 1ull << 30);
  ASSERT_TRUE(s.memory_hardware.cards);
  EXPECT_EQ(s.memory_hardware.slots_total(), 8u);
  EXPECT_EQ(s.memory_hardware.slots_used(), 4u);
  EXPECT_EQ(s.memory_hardware.speed_mhz(), 4800u);
  EXPECT_EQ(s.memory_hardware.cards->at(0).size_bytes, 16ull << 30);
  EXPECT_EQ(s.memory_hardware.cards->at(0).configured_speed_mts, 4400u);
  EXPECT_EQ(s.memory_hardware.cards->at(0).part_number, "M321R2GA3BB6-CQKET");

  ASSERT_TRUE(s.cgroup_memory);
  EXPECT_EQ(s.cgroup_memory->version, 2);
  EXPECT_EQ(s.cgroup_memory->limit_bytes, 8ull << 30);
  EXPECT_EQ(s.cgroup_memory->limit_source,
            "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_4242/memory.max");
  EXPECT_EQ(s.cgroup_memory->usage_bytes, 1234567890u);
  EXPECT_EQ(s.cgroup_memory->swap_limit_bytes, 0u);  // memory.swap.max "0": no swap at all

  EXPECT_EQ(s.board->vendor, "Supermicro");
  EXPECT_EQ(s.board->model, "X13SWA-TF");
  EXPECT_EQ(s.board->version, "1.01");
  EXPECT_EQ(s.board->bios_vendor, "American Megatrends International, LLC.");
  EXPECT_EQ(s.board->bios_version, "2.1");
  EXPECT_EQ(s.board->bios_date, "03/15/2024");

  EXPECT_EQ(s.environment.user, "ada");
  EXPECT_EQ(s.environment.group, "ada");
  EXPECT_EQ(s.environment.groups, (std::vector<std::string>{"ada", "video", "slurm-users"}));
  ASSERT_TRUE(s.environment.scheduler);
  EXPECT_EQ(s.environment.scheduler->name, "slurm");
  EXPECT_EQ(s.environment.scheduler->binary, "/opt/slurm/bin/sbatch");
  ASSERT_TRUE(s.environment.job);
  EXPECT_EQ(s.environment.job->id, "4242");
  EXPECT_EQ(s.environment.job->name, "train");

  // CC=clang in the job's environment overrides the table's first C compiler (gcc).
  EXPECT_EQ(s.compilers.c_compiler, "/usr/bin/clang");
  EXPECT_EQ(s.compilers.cxx_compiler, "/usr/bin/g++");

  ASSERT_EQ(s.disk.devices.size(), 2u);
  EXPECT_TRUE(s.disk.devices[0].nvme);
  EXPECT_EQ(s.scratch.path, "/local/slurm/4242");
  EXPECT_EQ(s.scratch.fs_type, "xfs");
  EXPECT_EQ(s.scratch.tier, StorageTier::local_ssd);
  EXPECT_EQ(candidate(s.scratch, "/scratch/ada")->tier, StorageTier::network);
  EXPECT_EQ(candidate(s.scratch, "/tmp")->tier, StorageTier::local_ssd);
  EXPECT_FALSE(candidate(s.scratch, "/dev/shm")->usable);
  auto home = std::find_if(s.disk.filesystems.begin(), s.disk.filesystems.end(),
                           [](const Filesystem& f) { return f.role == "home"; });
  ASSERT_NE(home, s.disk.filesystems.end());
  EXPECT_EQ(home->type, "nfs4");
  EXPECT_EQ(home->free_bytes, 1099511627776u);
}

TEST(FixtureHosts, GraceWithItsHbmNodeAnd64KiBPages) {
  auto s = fixture_snapshot("grace-hopper");
  const auto& cpu = s.cpu.info;
  EXPECT_EQ(cpu.architecture, "aarch64");
  EXPECT_EQ(cpu.microarchitecture, "Neoverse-V2");
  EXPECT_EQ(cpu.cores, 72u);
  // LPDDR5X with the CPUs, then the GPU's HBM as a node of memory alone.
  EXPECT_EQ(cpu.numa_nodes, 2u);
  ASSERT_TRUE(cpu.numa_memory_bytes);
  EXPECT_EQ(*cpu.numa_memory_bytes, (std::vector<std::uint64_t>{470000000ull * 1024, 96ull << 30}));
  EXPECT_EQ(cpu.memory_only_numa_nodes, (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(cpu.sve_vector_bits, 128u);
  ASSERT_EQ(cpu.caches.size(), 4u);
  EXPECT_EQ(cpu.cache_bytes(2, "unified"), 1ull << 20);
  // The 64 KiB-page kernel, from the recorded getconf.
  ASSERT_TRUE(s.os);
  EXPECT_EQ(s.os->kernel, "6.8.0-1013-nvidia-64k");
  EXPECT_EQ(s.os->page_size_bytes, 65536u);
  EXPECT_EQ(s.os->libc, "glibc 2.35");
  // A host that does not say has no page size, not a guess.
  auto other = fixture_snapshot("numa-2socket");
  ASSERT_TRUE(other.os);
  EXPECT_FALSE(other.os->page_size_bytes);
}

TEST(FixtureHosts, TwoSocketNumaServer) {
  auto s = fixture_snapshot("numa-2socket");
  const auto& cpu = s.cpu.info;
  EXPECT_EQ(cpu.packages, 2u);
  EXPECT_EQ(cpu.cores, 16u);
  EXPECT_EQ(cpu.threads, 32u);
  EXPECT_EQ(cpu.numa_nodes, 2u);
  ASSERT_TRUE(cpu.numa_memory_bytes);  // the recorded topology's local_memory of each node
  EXPECT_EQ(*cpu.numa_memory_bytes, (std::vector<std::uint64_t>{256ull << 30, 256ull << 30}));
  ASSERT_EQ(cpu.caches.size(), 4u);
  EXPECT_EQ(cpu.caches[3].level, 3);
  EXPECT_EQ(cpu.caches[3].instances, 2u);  // one L3 per socket
  EXPECT_EQ(cpu.caches[0].instances, 16u);
  ASSERT_EQ(s.cpu.clocks.size(), 1u);
  EXPECT_EQ(s.cpu.clocks[0].domain, "cpu0-31");
  EXPECT_DOUBLE_EQ(*s.cpu.clocks[0].max_mhz, 4100);
  EXPECT_EQ(s.memory->total_bytes, 512ull << 30);
  ASSERT_TRUE(s.cgroup_memory);
  EXPECT_EQ(s.cgroup_memory->version, 2);
  EXPECT_FALSE(s.cgroup_memory->capped());
  EXPECT_EQ(s.board->vendor, "Dell Inc.");
  EXPECT_EQ(s.board->model, "0H1TJT");
  EXPECT_NE(s.memory_hardware.cards.reason().find("not found"), std::string::npos);
  ASSERT_TRUE(s.toolchain);
  EXPECT_TRUE(s.toolchain->tools.empty());
  EXPECT_EQ(s.diagnostic("toolchain")->status, ProbeStatus::unsupported);
  // os-release where systemd puts it (/usr/lib), no getconf recorded: the C library unknown.
  ASSERT_TRUE(s.os);
  EXPECT_EQ(s.os->name, "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(s.os->id, "ubuntu");
  EXPECT_EQ(s.os->kernel, "5.15.0-105-generic");
  EXPECT_EQ(s.os->libc, "");
}

TEST(FixtureHosts, BrokenFilesDegradeWithoutCrashing) {
  auto s = fixture_snapshot("broken");
  // os-release: an unterminated quote is no value, an overlong one is cut; no kernel release.
  ASSERT_TRUE(s.os);
  EXPECT_EQ(s.os->name, "");
  EXPECT_EQ(s.os->id, "");
  EXPECT_EQ(s.os->version_id.size(), 256u);
  EXPECT_EQ(s.os->kernel, "");
  EXPECT_EQ(s.cpu.info.vendor, "Intel");
  EXPECT_FALSE(s.cpu.info.model);     // 99999999999999999999999 does not fit
  EXPECT_EQ(s.cpu.info.threads, 1u);  // counted from the one processor line
  EXPECT_EQ(s.cpu.info.topology_source, mainboard::TopologySource::proc_cpuinfo);
  EXPECT_TRUE(s.cpu.clocks.empty());
  EXPECT_FALSE(s.cpu.load_1m);
  EXPECT_FALSE(s.memory.ok());
  EXPECT_FALSE(s.memory.reason().empty());
  EXPECT_FALSE(s.cgroup_memory);
  EXPECT_NE(s.cgroup_memory.reason().find("malformed"), std::string::npos);
  ASSERT_TRUE(s.board);            // the BIOS version alone is a reading
  EXPECT_EQ(s.board->vendor, "");  // NUL inside: binary, not text
  EXPECT_EQ(s.board->model, "");   // a firmware placeholder
  EXPECT_EQ(s.board->bios_version, "F12");
  // Sizes that are no sector count: the disks are listed with their size unknown, and why.
  ASSERT_EQ(s.disk.devices.size(), 2u);
  EXPECT_FALSE(s.disk.devices[0].size_bytes);
  EXPECT_FALSE(s.disk.devices[1].size_bytes);
  EXPECT_NE(s.diagnostic("disk")->reason.find("sdb: size \"123abc\""), std::string::npos)
      << s.diagnostic("disk")->reason;
  EXPECT_EQ(s.environment.user, "");
  ASSERT_TRUE(s.toolchain);
  EXPECT_TRUE(s.toolchain->tools.empty());
  EXPECT_FALSE(s.scratch.found);
  for (const auto& d : s.diagnostics)
    EXPECT_NE(d.status, ProbeStatus::failed) << d.probe;
}

TEST(FixtureHosts, IdentityIsComputedOnceAndReadingsAreLive) {
  Machine::Options o;
  o.sysroot = fixture_host("cgroup2-capped");
  Machine m(o);
  EXPECT_EQ(&m.cpu(), &m.cpu());
  EXPECT_EQ(&m.board(), &m.board());
  EXPECT_EQ(&m.toolchain(), &m.toolchain());
  EXPECT_EQ(m.units().size(), 1u);
  EXPECT_EQ(m.units()[0]->kind(), UnitKind::cpu);
  EXPECT_EQ(m.cpu().memory()->total_bytes, 65536000ull * 1024);
  auto host = m.host();
  EXPECT_EQ(host.cpu.threads, 8u);
  EXPECT_EQ(host.disk.devices.size(), 2u);
  EXPECT_FALSE(m.nvcc_path());
  EXPECT_FALSE(m.cuda_architecture());
  auto snap = m.cpu().snapshot("step");
  EXPECT_EQ(snap.name, "step");
  EXPECT_EQ(snap.kind, UnitKind::cpu);
  EXPECT_EQ(snap.unit_name, "Intel(R) Xeon(R) w5-3435X");
  EXPECT_FALSE(snap.utilization.ok());
}

TEST(FixtureHosts, OneProbesPartAloneByItsRowsName) {
  Machine::Options o;
  o.sysroot = fixture_host("cgroup2-capped");
  Machine m(o);
  // An identity part (read once) and a live one that fill two halves of one member.
  auto dimms = m.reading("dimms").memory_hardware;
  EXPECT_EQ(dimms.slots_total(), 8u);
  EXPECT_EQ(dimms.swap_total_bytes, 0u);  // the swap row's half, not read
  auto swap = m.reading("swap").memory_hardware;
  EXPECT_TRUE(swap.cards.or_empty().empty());
  EXPECT_EQ(swap.swap_total_bytes, 8ull << 30);
  auto both = m.memory_hardware();
  EXPECT_EQ(both.slots_used(), 4u);
  EXPECT_EQ(both.swap_used_bytes, 1ull << 30);
  // The CPU's identity and its readings, each alone.
  auto cpu = m.reading("cpu").cpu;
  EXPECT_EQ(cpu.info.label, "Intel(R) Xeon(R) w5-3435X");
  EXPECT_TRUE(cpu.clocks.empty());
  auto clocks = m.reading("cpu_clocks").cpu;
  EXPECT_TRUE(clocks.info.label.empty());
  EXPECT_FALSE(clocks.clocks.empty());
  EXPECT_EQ(m.reading("pressure").pressure, m.pressure());
  EXPECT_EQ(m.reading("hostname").hostname, m.hostname());
  // A name the table does not hold is an error that lists those it does.
  try {
    (void)m.reading("presure");
    FAIL() << "no error";
  } catch (const mainboard::Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("no host probe 'presure'"), std::string::npos) << what;
    EXPECT_NE(what.find("pressure"), std::string::npos) << what;
  }
}

// In a guest every cache size (the kernel's cacheinfo included) comes from the CPUID the
// hypervisor presents (this VM's tells of a 508 MiB L3): marked, and left out of the schematic.
TEST(FixtureHosts, CachesOnlyAHypervisorDescribesAreNotShownAsFacts) {
  auto snapshot = [](const std::filesystem::path& root) {
    Machine::Options o;
    o.sysroot = root;
    return Machine(o).snapshot({.toolchain = false});
  };
  auto guest = snapshot(fixture_host("vm-cgroup1-nodmi"));
  EXPECT_EQ(guest.cpu.info.cache_source, mainboard::CacheSource::hypervisor);
  ASSERT_FALSE(guest.cpu.info.caches.empty());  // still in the JSON, with where it came from
  for (const auto& row : MachineView(guest).cpu_rows())
    EXPECT_EQ(row.find("L3"), std::string::npos) << row;
  auto text = view::render_summary(guest, view::Style{false});
  EXPECT_NE(text.find("caches as the hypervisor's CPUID describes them, not measured: L1d"),
            std::string::npos)
      << text;

  auto metal = snapshot(fixture_host("cgroup2-capped"));
  EXPECT_EQ(metal.cpu.info.cache_source, mainboard::CacheSource::kernel);
  auto rows = MachineView(metal).cpu_rows();
  EXPECT_NE(rows.back().find("L3 22.5 MiB"), std::string::npos) << rows.back();
  // The same host without the kernel's cacheinfo: what the processor reports.
  TempDir copy;
  std::filesystem::copy(fixture_host("cgroup2-capped"), copy.path(),
                        std::filesystem::copy_options::recursive);
  std::filesystem::remove_all(copy.path() / "sys/devices/system/cpu/cpu0/cache");
  EXPECT_EQ(snapshot(copy.path()).cpu.info.cache_source, mainboard::CacheSource::processor);
}

// Half of this guest's memory is in no NUMA node (hot-plugged): both figures are said.
TEST(FixtureHosts, MemoryOutsideTheNumaNodesIsSaid) {
  auto summary = [](const std::string& host) {
    Machine::Options o;
    o.sysroot = fixture_host(host);
    return view::render_summary(Machine(o).snapshot({.toolchain = false}), view::Style{false});
  };
  auto vm = summary("vm-cgroup1-nodmi");
  EXPECT_NE(vm.find("the NUMA nodes seen hold 11.6 GiB of the 23.5 GiB the kernel counts (49 %): "
                    "memory in no node (hot-plugged or ballooned) or in nodes this process may "
                    "not use"),
            std::string::npos)
      << vm;
  // Nodes that add up, and a GPU's memory onlined as a node without CPUs, are not remarked on.
  for (const char* host : {"cgroup2-capped", "numa-2socket", "grace-hopper"})
    EXPECT_EQ(summary(host).find("NUMA nodes seen"), std::string::npos) << host;
}

TEST(FixtureHosts, SysrootFromTheEnvironment) {
  ::setenv("MAINBOARD_SYSROOT", fixture_host("numa-2socket").c_str(), 1);
  Machine m;
  ::unsetenv("MAINBOARD_SYSROOT");
  EXPECT_FALSE(m.is_live());
  EXPECT_EQ(m.hostname(), "r760-a");
  EXPECT_EQ(Memory::system()->total_bytes > 0, true);
}

// This machine: the C library is asked directly (no program started) and agrees with getconf.
TEST(LiveHost, TheCLibraryAgreesWithGetconf) {
  auto getconf =
      LocalRunner("/usr/bin:/bin").run(Command{{"/usr/bin/getconf", "GNU_LIBC_VERSION"}});
  if (!getconf.ok()) GTEST_SKIP() << "no getconf here";
  Machine m;
  auto s = m.snapshot({.toolchain = false});
  ASSERT_TRUE(s.os);
  std::string said(core::trim(getconf.out));  // "glibc 2.36"
  EXPECT_EQ(s.os->libc, said);
}
