#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "host/microarch.hpp"
#include "host/probes.hpp"
#include "mainboard/toolchain.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {
const char* kGrace =
    "processor\t: 0\nBogoMIPS\t: 2000.00\n"
    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm "
    "jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs "
    "sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm "
    "svebf16 i8mm bf16 dgh bti\n"
    "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\n"
    "CPU revision\t: 0\n\nprocessor\t: 1\n";

const char* kCascadeLake =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
    "model name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nstepping\t: 7\n"
    "flags\t\t: fpu lm avx avx2 avx512f avx512_vnni\n";
}  // namespace

TEST(CpuInfo, X86IdentityAndSteppingDisambiguation) {
  auto info = host::parse_cpuinfo_identity(kCascadeLake);
  EXPECT_EQ(info.vendor, "Intel");
  EXPECT_EQ(info.family, 6);
  EXPECT_EQ(info.model, 85);
  EXPECT_EQ(info.stepping, 7);
  EXPECT_EQ(info.label, "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz");
  EXPECT_EQ(info.microarchitecture, "Cascade Lake");  // model 85 stepping 7, not Skylake-SP
  EXPECT_EQ(info.isa_extensions,
            (std::vector<std::string>{"avx", "avx2", "avx512f", "avx512_vnni"}));
}

TEST(CpuInfo, GraceIsANeoverseV2WithSve2) {
  auto info = host::parse_cpuinfo_identity(kGrace);
  EXPECT_EQ(info.vendor, "ARM");
  EXPECT_EQ(info.microarchitecture, "Neoverse-V2");
  EXPECT_EQ(info.label, "ARM Neoverse-V2");
  EXPECT_EQ(info.model, 0xd4f);
  auto& isa = info.isa_extensions;
  EXPECT_NE(std::find(isa.begin(), isa.end(), "sve2"), isa.end());
  EXPECT_NE(std::find(isa.begin(), isa.end(), "bf16"), isa.end());
}

TEST(CpuInfo, MicroarchitectureTables) {
  EXPECT_EQ(host::x86_microarchitecture("AMD", 0x19, 0x11, 1), "Zen 4");
  EXPECT_EQ(host::x86_microarchitecture("AMD", 0x19, 0x01, 1), "Zen 3");
  EXPECT_EQ(host::x86_microarchitecture("AMD", 0x17, 0x31, 0), "Zen 2");
  EXPECT_EQ(host::x86_microarchitecture("AMD", 0x1A, 0x02, 0), "Zen 5");
  EXPECT_EQ(host::x86_microarchitecture("Intel", 6, 0x8F, 8), "Sapphire Rapids");
  EXPECT_EQ(host::x86_microarchitecture("Intel", 6, 0x55, 4), "Skylake-SP");
  EXPECT_EQ(host::x86_microarchitecture("Intel", 6, 0x12345, 0), "");  // unknown stays blank
  EXPECT_EQ(host::arm_microarchitecture(0x41, 0xd0c), "Neoverse-N1");
  EXPECT_EQ(host::arm_microarchitecture(0xc0, 0xac3), "AmpereOne");
  EXPECT_EQ(host::arm_microarchitecture(0x41, 0xfff), "");
  EXPECT_EQ(host::arm_implementer_name(0x4e), "NVIDIA");
}

TEST(CpuInfo, OtherArchitecturesAndMalformedInput) {
  // POWER: the processor, without the kernel's mode and "altivec supported".
  EXPECT_EQ(host::parse_cpuinfo_identity("processor\t: 0\ncpu\t\t: POWER10 (architected)\n").label,
            "POWER10");
  EXPECT_EQ(host::parse_cpuinfo_identity("").label, "");
  EXPECT_EQ(host::parse_cpuinfo_identity("\x01\x02\x03 garbage : :: \n\n\n").label, "");
  auto truncated = host::parse_cpuinfo_identity(
      "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: "
      "999999999999999999999\n");
  EXPECT_EQ(truncated.vendor, "Intel");
  EXPECT_FALSE(truncated.model);
  EXPECT_EQ(truncated.microarchitecture, "");
  std::string huge(2u << 20, 'x');
  EXPECT_EQ(host::parse_cpuinfo_identity(huge).label, "");
}

TEST(CpuProbe, CountsFromCpuinfoWhenTheTopologyIsMissing) {
  TempDir root;
  root.write("proc/cpuinfo",
             "processor\t: 0\nvendor_id\t: AuthenticAMD\nphysical id\t: 0\ncore id\t: 0\n\n"
             "processor\t: 1\nvendor_id\t: AuthenticAMD\nphysical id\t: 0\ncore id\t: 0\n\n"
             "processor\t: 2\nvendor_id\t: AuthenticAMD\nphysical id\t: 1\ncore id\t: 0\n\n");
  core::Fs fs(root.path());
  host::Note note;
  auto info = host::probe_cpu(fs, note);
  EXPECT_EQ(info.topology_source, mainboard::TopologySource::proc_cpuinfo);
  EXPECT_EQ(info.threads, 3u);
  EXPECT_EQ(info.packages, 2u);
  EXPECT_EQ(info.cores, 2u);
  EXPECT_EQ(note.status, ProbeStatus::unsupported);  // the hwloc failure is noted
  EXPECT_EQ(info.label, "AMD CPU");
}

TEST(CpuProbe, NothingReadableStillYieldsAnInfo) {
  TempDir root;
  core::Fs fs(root.path());
  host::Note note;
  auto info = host::probe_cpu(fs, note);
  EXPECT_EQ(info.threads, 0u);
  EXPECT_EQ(info.label, "unknown CPU");
  EXPECT_NE(note.reason.find("/proc/cpuinfo"), std::string::npos);
}

TEST(CpuClocks, PoliciesWithTheSameLimitsMerge) {
  // A hybrid part: four performance cores and four efficiency cores.
  TempDir root;
  for (int cpu = 0; cpu < 8; ++cpu) {
    auto dir = "sys/devices/system/cpu/cpufreq/policy" + std::to_string(cpu) + "/";
    bool p_core = cpu < 4;
    root.write(dir + "related_cpus", std::to_string(cpu));
    root.write(dir + "cpuinfo_min_freq", "800000");
    root.write(dir + "cpuinfo_max_freq", p_core ? "5000000" : "3800000");
    root.write(dir + "scaling_cur_freq", p_core ? (cpu % 2 ? "4000000" : "3000000") : "1000000");
  }
  core::Fs fs(root.path());
  auto clocks = host::read_cpu_clocks(fs);
  ASSERT_EQ(clocks.size(), 2u);
  EXPECT_EQ(clocks[0].domain, "cpu4-7");  // ordered by limits: the slower cores first
  EXPECT_DOUBLE_EQ(*clocks[0].max_mhz, 3800);
  EXPECT_DOUBLE_EQ(*clocks[0].current_mhz, 1000);
  EXPECT_EQ(clocks[1].domain, "cpu0-3");
  EXPECT_DOUBLE_EQ(*clocks[1].current_mhz, 3500);
  EXPECT_DOUBLE_EQ(*clocks[1].min_mhz, 800);
  EXPECT_EQ(clocks[1].source, "cpufreq");
}

TEST(CpuClocks, FallsBackToCpuinfoAndIgnoresNonsense) {
  TempDir root;
  root.write("proc/cpuinfo",
             "cpu MHz\t\t: 2000.0\ncpu MHz\t\t: 3000.0\ncpu MHz\t\t: -1\ncpu MHz : x\n");
  core::Fs fs(root.path());
  auto clocks = host::read_cpu_clocks(fs);
  ASSERT_EQ(clocks.size(), 1u);
  EXPECT_DOUBLE_EQ(*clocks[0].current_mhz, 2500);
  EXPECT_EQ(clocks[0].source, "/proc/cpuinfo");
  EXPECT_FALSE(clocks[0].max_mhz);
}

TEST(LoadAverage, ParsesAndRejects) {
  TempDir root;
  root.write("proc/loadavg", "0.50 1.00 1.50 2/300 4000\n");
  EXPECT_DOUBLE_EQ(host::read_loadavg(core::Fs(root.path()))->five, 1.0);
  root.write("proc/loadavg", "0.5\n");
  EXPECT_FALSE(host::read_loadavg(core::Fs(root.path())));
}

TEST(CpuProbe, TheTopologyIsKeptUntilWhatItDependsOnChanges) {
  // A copy of a two-socket host (its hwloc XML, 32 threads), with the files the key is read from.
  TempDir root;
  std::filesystem::copy(fixture_host("numa-2socket"), root.path(),
                        std::filesystem::copy_options::recursive);
  root.write("proc/sys/kernel/random/boot_id", "0f9d2c1e-0000-4000-8000-000000000001\n");
  root.write("proc/self/status",
             "Name:\tpython3\nCpus_allowed_list:\t0-31\n"
             "Mems_allowed_list:\t0-1\n");
  core::Fs fs(root.path());
  TempDir cache_dir;
  auto file = cache_dir.path() / "tools.cache";
  auto probe = [&] {
    ToolCache cache(file);
    host::Note note;
    auto info = host::probe_cpu(fs, note, &cache);
    cache.save();
    return info;
  };
  // The cache's topology entries, from its lines ("v", key, value; tab-separated).
  auto entries = [&] {
    std::ifstream in(file);
    std::map<std::string, std::string> out;
    for (std::string line; std::getline(in, line);)
      if (line.rfind("v\ttopology|", 0) == 0) {
        auto tab = line.find('\t', 2);
        if (tab != std::string::npos) out[line.substr(2, tab - 2)] = line.substr(tab + 1);
      }
    return out;
  };
  // Puts `value` in the cache under the one topology key there is.
  auto doctor = [&](const std::string& value) {
    ToolCache cache(file);
    cache.store(entries().begin()->first, value);
    cache.save();
  };
  auto first = probe();
  EXPECT_EQ(first.topology_source, TopologySource::hwloc);
  EXPECT_EQ(first.threads, 32u);
  ASSERT_EQ(entries().size(), 1u);
  // The same key: the cached topology is what the probe says (marked here to tell it apart).
  auto doctored = nlohmann::json::parse(entries().begin()->second);
  doctored["threads"] = 999;
  doctor(doctored.dump());
  EXPECT_EQ(probe().threads, 999u);
  // A CPU taken offline, another cpuset, a node's memory changed: read again, one entry kept.
  for (auto [path, text] : std::vector<std::pair<std::string, std::string>>{
           {"sys/devices/system/cpu/online", "0-30\n"},
           {"proc/self/status", "Cpus_allowed_list:\t0-15\nMems_allowed_list:\t0\n"},
           {"sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:       1048576 kB\n"}}) {
    root.write(path, text);
    doctor(doctored.dump());
    auto again = probe();
    EXPECT_EQ(again.threads, 32u) << path;
    EXPECT_EQ(entries().size(), 1u) << path;
  }
  // A cached value that is not a topology is read again, never believed.
  for (const char* bad : {"", "[]", "{\"threads\": 4}", "{\"threads\":\"x\"}", "\"\\u0000\""}) {
    doctor(bad);
    EXPECT_EQ(probe().threads, 32u) << bad;
  }
  // Without a boot id (another kernel's files, a container hiding it) nothing is cached.
  std::filesystem::remove(root.path() / "proc/sys/kernel/random/boot_id");
  std::filesystem::remove(file);
  EXPECT_EQ(probe().threads, 32u);
  EXPECT_TRUE(entries().empty());
}

TEST(CpuInfo, ArchitectureFromTheLayoutNotOneField) {
  // MIPS also prints an "isa" line: it is not RISC-V.
  EXPECT_EQ(
      host::cpuinfo_architecture("system type\t\t: X\nprocessor\t\t: 0\ncpu model\t\t: "
                                 "MIPS 24Kc V7.4\nisa\t\t\t: mips1 mips2 mips32r1 mips32r2\n"),
      "mips");
  EXPECT_EQ(host::cpuinfo_architecture("processor\t: 0\nisa\t\t: rv32imac\nmmu\t\t: sv32\n"),
            "riscv32");
  EXPECT_EQ(host::cpuinfo_architecture(kGrace), "aarch64");
  EXPECT_EQ(host::cpuinfo_architecture(kCascadeLake), "x86_64");
  EXPECT_EQ(host::cpuinfo_architecture("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu "
                                       "pae\n"),
            "i686");
  // An ARM926 names its architecture, not its ELF platform, in the old layout.
  EXPECT_EQ(host::cpuinfo_architecture("Processor\t: ARM926EJ-S rev 5\nCPU implementer\t: 0x41\n"
                                       "CPU architecture: 5TEJ\n"),
            "armv5tejl");
  EXPECT_EQ(host::cpuinfo_architecture("processor\t: 0\ncpu\t\t: POWER7 (architected)\n"
                                       "\ntimebase\t: 512000000\n"),
            "ppc64");
  EXPECT_EQ(host::cpuinfo_architecture("processor\t: 0\ncpu\t\t: 7447A, altivec supported\n"),
            "ppc");
  // Malformed: nothing said is nothing guessed.
  EXPECT_EQ(host::cpuinfo_architecture(""), "");
  EXPECT_EQ(host::cpuinfo_architecture("\x01\x02\x03 garbage : :: \n\n\n"), "");
  EXPECT_EQ(host::cpuinfo_architecture("model name\t: ARMv7 Processor rev 3 (v"), "");
  EXPECT_EQ(host::cpuinfo_architecture(std::string(2u << 20, 'x')), "");
}

TEST(CpuInfo, OtherArchitecturesMalformed) {
  // s390x without its machine line, a truncated one, one with garbage.
  EXPECT_EQ(host::parse_cpuinfo_identity("vendor_id       : IBM/S390\n").label, "IBM/S390");
  EXPECT_EQ(host::parse_cpuinfo_identity("vendor_id       : IBM/S390\nprocessor 0: version = FF,  "
                                         "identification = 0133E8,  machine = 85")
                .label,
            "IBM/S390");
  EXPECT_EQ(
      host::parse_cpuinfo_identity("vendor_id       : IBM/S390\nprocessor 0: machine = zzzz\n")
          .label,
      "IBM/S390");
  EXPECT_EQ(host::parse_cpuinfo_identity("vendor_id       : IBM/S390\nprocessor 0: version = FF,  "
                                         "identification = 0133E8,  machine = 3931\n")
                .label,
            "IBM z16 (3931)");
  // RISC-V: an empty ISA string names nothing.
  EXPECT_EQ(host::parse_cpuinfo_identity("processor\t: 0\nisa\t\t:\n").label, "");
  EXPECT_EQ(
      host::parse_cpuinfo_identity("processor\t: 0\nisa\t\t: rv64gc\nmvendorid\t: 0x489\n").vendor,
      "SiFive");
  EXPECT_EQ(
      host::parse_cpuinfo_identity("processor\t: 0\nisa\t\t: rv64gc\nmvendorid\t: junk\n").vendor,
      "");
}

TEST(CpuProbe, GarbageCpuinfoIsSaidToBeReadButNotUnderstood) {
  TempDir root;
  root.write("proc/cpuinfo", "\x01\x02\x7f garbage without fields\n\xff\xfe\n");
  host::Note note;
  auto info = host::probe_cpu(core::Fs(root.path()), note);
  EXPECT_EQ(info.label, "unknown CPU");
  EXPECT_EQ(info.threads, 0u);
  EXPECT_NE(note.reason.find("/proc/cpuinfo was read but holds no \"key : value\" fields"),
            std::string::npos)
      << note.reason;
  EXPECT_EQ(note.reason.find("cannot read"), std::string::npos) << note.reason;

  // Binary (a NUL inside): read, and said to be binary rather than unreadable.
  root.write("proc/cpuinfo", std::string("pro\0cessor\t: 0\n", 15));
  host::Note binary;
  host::probe_cpu(core::Fs(root.path()), binary);
  EXPECT_NE(binary.reason.find("/proc/cpuinfo was read but holds binary bytes"), std::string::npos)
      << binary.reason;
}

TEST(CpuProbe, SysfsTopologyMalformedFallsBackToCpuinfo) {
  TempDir root;
  root.write("proc/cpuinfo",
             "processor\t: 0\nvendor_id\t: AuthenticAMD\n\n"
             "processor\t: 1\nvendor_id\t: AuthenticAMD\n");
  root.write("sys/devices/system/cpu/online", "0-1\n");
  root.write("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
  root.write("sys/devices/system/cpu/cpu0/topology/core_id", "0\n");
  root.write("sys/devices/system/cpu/cpu1/topology/physical_package_id", "NaN\n");
  root.write("sys/devices/system/cpu/cpu1/topology/core_id", "1\n");
  host::Note note;
  auto info = host::probe_cpu(core::Fs(root.path()), note);
  EXPECT_EQ(info.topology_source, TopologySource::proc_cpuinfo);
  EXPECT_EQ(info.threads, 2u);
  EXPECT_EQ(note.status, ProbeStatus::unsupported);

  // Whole: two CPUs of one core; a node whose meminfo is garbage leaves per-node memory unsaid.
  root.write("sys/devices/system/cpu/cpu1/topology/physical_package_id", "0\n");
  root.write("sys/devices/system/cpu/cpu1/topology/core_id", "0\n");
  root.write("sys/devices/system/node/node0/cpulist", "0-1\n");
  root.write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: lots\n");
  host::Note ok;
  auto sys = host::probe_cpu(core::Fs(root.path()), ok);
  EXPECT_EQ(sys.topology_source, TopologySource::sysfs);
  EXPECT_EQ(sys.cores, 1u);
  EXPECT_EQ(sys.threads, 2u);
  EXPECT_EQ(sys.numa_nodes, 1u);
  EXPECT_FALSE(sys.numa_memory_bytes);
  EXPECT_EQ(ok.status, ProbeStatus::ok) << ok.reason;
}

TEST(CpuClocks, PerCpuLayoutWithoutPolicies) {
  // Before policyN: each CPU's cpufreq/, the CPUs of a domain naming each other.
  TempDir root;
  for (int cpu = 0; cpu < 4; ++cpu) {
    auto dir = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/";
    root.write(dir + "related_cpus", "0 1 2 3\n");
    root.write(dir + "cpuinfo_min_freq", "600000\n");
    root.write(dir + "cpuinfo_max_freq", "1500000\n");
    root.write(dir + "scaling_cur_freq", "1200000\n");
  }
  auto clocks = host::read_cpu_clocks(core::Fs(root.path()));
  ASSERT_EQ(clocks.size(), 1u);
  EXPECT_EQ(clocks[0].domain, "cpu0-3");
  EXPECT_DOUBLE_EQ(*clocks[0].current_mhz, 1200);
  EXPECT_DOUBLE_EQ(*clocks[0].max_mhz, 1500);
  EXPECT_EQ(clocks[0].source, "cpufreq");
}

TEST(CpuClocks, UselessRelatedCpusFallBackToThePolicysOwnCpu) {
  TempDir root;
  for (int cpu = 0; cpu < 4; ++cpu) {
    auto dir = "sys/devices/system/cpu/cpufreq/policy" + std::to_string(cpu) + "/";
    // Every policy says 0, or 0 four times, or nothing a CPU list can be.
    root.write(dir + "related_cpus", cpu == 1 ? "0 0 0 0\n" : cpu == 2 ? "zz\n" : "0\n");
    root.write(dir + "cpuinfo_max_freq", "2000000\n");
    root.write(dir + "scaling_cur_freq", "1000000\n");
  }
  auto clocks = host::read_cpu_clocks(core::Fs(root.path()));
  ASSERT_EQ(clocks.size(), 1u);
  EXPECT_EQ(clocks[0].domain, "cpu0-3");
}

TEST(LoadAverage, MalformedSaysWhy) {
  TempDir root;
  std::string why;
  for (const char* bad : {"", "0.5\n", "nan nan nan 1/2 3\n", "-1 0 0 1/2 3\n", "1e999 1 1 1/2 3\n",
                          "\x01\x02 garbage here\n", "0.5 0.6"}) {
    root.write("proc/loadavg", bad);
    why.clear();
    EXPECT_FALSE(host::read_loadavg(core::Fs(root.path()), &why)) << bad;
    EXPECT_NE(why.find("/proc/loadavg was read but"), std::string::npos) << bad << ": " << why;
  }
  std::filesystem::remove(root.path() / "proc/loadavg");
  EXPECT_FALSE(host::read_loadavg(core::Fs(root.path()), &why));
  EXPECT_NE(why.find("cannot read /proc/loadavg"), std::string::npos) << why;
  ASSERT_EQ(::mkfifo((root.path() / "proc/loadavg").c_str(), 0600), 0);
  EXPECT_FALSE(host::read_loadavg(core::Fs(root.path()), &why));
  EXPECT_EQ(why, "/proc/loadavg is a FIFO, not the kernel's file");
  std::filesystem::remove(root.path() / "proc/loadavg");
  root.write("proc/loadavg", std::string(8192, '1'));
  EXPECT_FALSE(host::read_loadavg(core::Fs(root.path()), &why));
  EXPECT_NE(why.find("larger than"), std::string::npos) << why;
}
