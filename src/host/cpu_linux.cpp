#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/log.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/libhwloc.hpp"
#include "host/microarch.hpp"
#include "host/probes.hpp"
#include "mainboard/toolchain.hpp"
#include "mainboard/version.hpp"

namespace mainboard::host {

namespace {

using core::find_value;
using core::parse_u64;
using core::parse_u64_base;
using core::split_ws;
using core::trim;

/// The first processor's block of /proc/cpuinfo (identity fields repeat for every CPU). Where
/// the kernel prints a summary before it (LoongArch's "system type" and a blank line, s390's
/// summary), the block of the first processor is taken with it.
std::string_view first_block(std::string_view cpuinfo) {
  auto end = cpuinfo.find("\n\n");
  if (end == std::string_view::npos) return cpuinfo;
  if (!find_value(cpuinfo.substr(0, end), "processor")) {
    auto next = cpuinfo.find("\n\n", end + 2);
    return next == std::string_view::npos ? cpuinfo : cpuinfo.substr(0, next);
  }
  return cpuinfo.substr(0, end);
}

std::optional<int> int_field(std::string_view block, std::string_view key, int base = 10) {
  auto v = find_value(block, key);
  if (!v) return std::nullopt;
  auto n = parse_u64_base(*v, base);
  if (!n || *n > 0x7fffffff) return std::nullopt;
  return static_cast<int>(*n);
}

/// Extensions that decide which kernels a machine can run, by the names the kernel prints.
constexpr const char* kX86Extensions[] = {"sse4_2",      "avx",         "avx2",        "fma",
                                          "f16c",        "avx512f",     "avx512bw",    "avx512vl",
                                          "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni",
                                          "amx_tile",    "amx_bf16",    "amx_int8",    "sha_ni"};
constexpr const char* kArmExtensions[] = {"asimd", "asimddp", "asimdfhm", "fphp", "bf16",   "i8mm",
                                          "sve",   "sve2",    "sme",      "sme2", "atomics"};

std::vector<std::string> pick_extensions(std::string_view flags_line, bool arm) {
  std::set<std::string_view> present;
  for (auto f : split_ws(flags_line))
    present.insert(f);
  std::vector<std::string> out;
  if (arm) {
    for (const char* e : kArmExtensions)
      if (present.count(e)) out.emplace_back(e);
  } else {
    for (const char* e : kX86Extensions)
      if (present.count(e)) out.emplace_back(e);
  }
  return out;
}

/// 32-bit Arm: "arm" and the ELF platform the kernel prints after the model name, "(v7l)" →
/// "armv7l", as uname -m says; else from "CPU architecture" ("7" → "armv7l", "5TEJ" →
/// "armv5tejl"). Empty when the block says neither.
std::string arm32_architecture(std::string_view block) {
  for (const char* key : {"model name", "Processor"}) {
    auto name = find_value(block, key);
    if (!name || name->size() < 5 || name->back() != ')') continue;
    auto open = name->rfind("(v");
    if (open == std::string_view::npos) continue;
    auto platform = name->substr(open + 1, name->size() - open - 2);  // v7l
    if (platform.size() >= 3 && platform.size() <= 8 &&
        (platform.back() == 'l' || platform.back() == 'b') &&
        std::all_of(platform.begin() + 1, platform.end() - 1,
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return "arm" + std::string(platform);
  }
  if (auto arch = find_value(block, "CPU architecture");
      arch && !arch->empty() && *arch != "8" && arch->size() <= 8) {
    std::string out = "armv";
    for (char c : *arch) {
      if (!std::isalnum(static_cast<unsigned char>(c))) return "";
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out + "l";
  }
  return "";
}

/// A POWER or PowerPC "cpu" line as uname -m would name the kernel's architecture. cpuinfo never
/// says the byte order: POWER8 and later are taken as little-endian (ppc64le, what every current
/// distribution runs), earlier 64-bit parts as ppc64, anything else as 32-bit ppc.
std::string power_architecture(std::string_view cpu) {
  if (core::starts_with(cpu, "POWER")) {
    auto generation = core::parse_u64(cpu.substr(5, cpu.find_first_not_of("0123456789", 5) - 5));
    return generation && *generation >= 8 ? "ppc64le" : "ppc64";
  }
  if (core::starts_with(cpu, "PPC970") || core::starts_with(cpu, "Cell")) return "ppc64";
  return "ppc";
}

}  // namespace

std::string cpuinfo_architecture(std::string_view cpuinfo) {
  auto block = first_block(cpuinfo);
  // s390x prints its summary first: vendor_id "IBM/S390" (the 31-bit s390 is long gone).
  if (auto vendor = find_value(block, "vendor_id"); vendor && *vendor == "IBM/S390") return "s390x";
  if (find_value(block, "CPU implementer") || find_value(block, "CPU architecture")) {
    auto arm32 = arm32_architecture(block);
    return arm32.empty() ? "aarch64" : arm32;
  }
  if (auto flags = find_value(block, "flags"); flags && find_value(block, "vendor_id")) {
    for (auto f : split_ws(*flags))
      if (f == "lm") return "x86_64";
    return "i686";
  }
  // MIPS: "cpu model" and an isa line of mipsN names; 64-bit when it lists a mips64 ISA.
  if (find_value(block, "cpu model") || find_value(block, "system type")) {
    if (auto isa = find_value(block, "isa")) {
      for (auto f : split_ws(*isa))
        if (core::starts_with(f, "mips64")) return "mips64";
      return "mips";
    }
  }
  if (auto isa = find_value(block, "ISA");
      isa && isa->find("loongarch64") != std::string_view::npos)
    return "loongarch64";
  if (find_value(block, "CPU Family") || find_value(block, "Model Name")) {
    auto family = find_value(block, "CPU Family").value_or("");
    if (family.find("64") != std::string_view::npos) return "loongarch64";
    if (family.find("32") != std::string_view::npos) return "loongarch32";
  }
  if (auto isa = find_value(block, "isa")) {
    if (core::starts_with(*isa, "rv64")) return "riscv64";
    if (core::starts_with(*isa, "rv32")) return "riscv32";
  }
  if (auto cpu = find_value(block, "cpu");
      cpu && (find_value(cpuinfo, "timebase") || cpu->find("altivec") != std::string_view::npos ||
              core::starts_with(*cpu, "POWER")))
    return power_architecture(*cpu);
  return "";
}

namespace {

struct Topology {
  std::uint32_t packages = 0, cores = 0, threads = 0, numa_nodes = 0;
  std::vector<std::uint64_t> numa_memory;  // by node, in hwloc's order
  std::vector<std::uint32_t> memory_only;  // nodes without CPUs
  std::vector<CacheInfo> caches;
};

/// A topology object of hwloc, destroyed with its scope.
struct HwlocTopology {
  const Libhwloc& hwloc = libhwloc();
  hwloc_topology_t topo = nullptr;
  ~HwlocTopology() {
    if (topo) hwloc.hwloc_topology_destroy(topo);
  }
};

/// Loads the CPU side of a topology: this host's, or the XML a recorded host carries. hwloc 2.x
/// reads another root only through the HWLOC_FSROOT environment variable, and changing the
/// environment races with any getenv() of the host program, so a recorded host never does that:
/// gather records the topology as XML (core::paths::kRecordTopology).
bool load_topology(const core::Fs& fs, HwlocTopology& t, std::string& error) {
  std::optional<std::string> xml;
  if (!fs.is_live()) {
    xml = fs.read(core::paths::kRecordTopology, 64u << 20);
    if (!xml || xml->empty()) {
      error = std::string("this recorded host has no CPU topology (") +
              core::paths::kRecordTopology + ", which mainboard gather records)";
      return false;
    }
  }
  const auto& hwloc = t.hwloc;
  if (!hwloc) {
    error = hwloc.error;
    return false;
  }
  if (hwloc.hwloc_topology_init(&t.topo) != 0) {
    t.topo = nullptr;
    error = "hwloc could not start";
    return false;
  }
  // Only the CPU side: no PCI/I/O discovery (slow, and the GPU providers do their own).
  hwloc.hwloc_topology_set_io_types_filter(t.topo, HWLOC_TYPE_FILTER_KEEP_NONE);
  // Instruction caches are filtered out by default; we report L1i.
  hwloc.hwloc_topology_set_icache_types_filter(t.topo, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (xml && hwloc.hwloc_topology_set_xmlbuffer(t.topo, xml->data(),
                                                static_cast<int>(xml->size() + 1)) != 0) {
    error = "the recorded CPU topology is not hwloc XML";
    return false;
  }
  if (hwloc.hwloc_topology_load(t.topo) != 0) {
    error = xml ? "hwloc could not load the recorded CPU topology"
                : "hwloc could not load the topology";
    return false;
  }
  return true;
}

/// hwloc XML without what describes the run rather than the host.
std::string scrub_topology(std::string_view xml) {
  std::string out;
  for (auto line : core::split_lines(xml)) {
    if (line.find("name=\"ProcessName\"") != std::string_view::npos ||
        line.find("name=\"hwlocVersion\"") != std::string_view::npos ||
        line.find("name=\"HostName\"") != std::string_view::npos)
      continue;
    out.append(line);
    out += '\n';
  }
  return out;
}

std::optional<Topology> hwloc_topology(const core::Fs& fs, std::string& error) {
  HwlocTopology loaded;
  if (!load_topology(fs, loaded, error)) return std::nullopt;
  hwloc_topology_t topo = loaded.topo;
  const auto& hwloc = loaded.hwloc;
  Topology t;
  auto count = [&](hwloc_obj_type_t type) {
    int n = hwloc.nbobjs_by_type(topo, type);
    return n > 0 ? static_cast<std::uint32_t>(n) : 0u;
  };
  t.packages = count(HWLOC_OBJ_PACKAGE);
  t.cores = count(HWLOC_OBJ_CORE);
  t.threads = count(HWLOC_OBJ_PU);
  t.numa_nodes = count(HWLOC_OBJ_NUMANODE);
  for (std::uint32_t i = 0; i < t.numa_nodes; ++i)
    if (auto* node = hwloc.obj_by_type(topo, HWLOC_OBJ_NUMANODE, i); node && node->attr) {
      t.numa_memory.push_back(node->attr->numanode.local_memory);
      if (node->cpuset && hwloc.hwloc_bitmap_iszero(node->cpuset)) t.memory_only.push_back(i);
    }
  if (t.numa_memory.size() != t.numa_nodes ||
      std::all_of(t.numa_memory.begin(), t.numa_memory.end(), [](auto b) { return b == 0; }))
    t.numa_memory.clear();  // not said, or not for every node
  struct Level {
    hwloc_obj_type_t type;
    int level;
  };
  constexpr Level kLevels[] = {{HWLOC_OBJ_L1CACHE, 1},
                               {HWLOC_OBJ_L1ICACHE, 1},
                               {HWLOC_OBJ_L2CACHE, 2},
                               {HWLOC_OBJ_L3CACHE, 3},
                               {HWLOC_OBJ_L4CACHE, 4}};
  for (auto [type, level] : kLevels) {
    int n = hwloc.nbobjs_by_type(topo, type);
    if (n <= 0) continue;
    hwloc_obj_t obj = hwloc.obj_by_type(topo, type, 0);
    if (!obj || !obj->attr) continue;
    CacheInfo c;
    c.level = level;
    switch (obj->attr->cache.type) {
      case HWLOC_OBJ_CACHE_DATA: c.type = "data"; break;
      case HWLOC_OBJ_CACHE_INSTRUCTION: c.type = "instruction"; break;
      default: c.type = "unified"; break;
    }
    c.size_bytes = obj->attr->cache.size;
    c.instances = static_cast<std::uint32_t>(n);
    t.caches.push_back(c);
  }
  if (t.threads == 0) {
    error = "hwloc found no processing units";
    return std::nullopt;
  }
  return t;
}

/// A node's meminfo line from "MemTotal:" to its end ("Node 0 MemTotal:  131072000 kB" gives
/// "MemTotal:  131072000 kB"); empty where there is none.
std::optional<std::string_view> node_mem_total(std::string_view meminfo) {
  auto at = meminfo.find("MemTotal:");
  if (at == std::string_view::npos) return std::nullopt;
  auto end = meminfo.find('\n', at);
  return meminfo.substr(at, end == std::string_view::npos ? end : end - at);
}

}  // namespace

/// What a topology read by hwloc depends on besides this boot's hardware: the CPUs and NUMA nodes
/// online, what this process may use (a cgroup's cpuset, taskset: hwloc leaves out the rest),
/// each node's memory (hot-plug, ballooning) and the reader's version. The same key, the same
/// topology: loading hwloc and reading its hundred files of /sys is a snapshot's longest probe.
std::optional<std::string> topology_key(const core::Fs& fs) {
  auto boot = fs.read_line("/proc/sys/kernel/random/boot_id");
  auto online = fs.read_line("/sys/devices/system/cpu/online");
  auto status = fs.read("/proc/self/status");
  if (!boot || boot->empty() || !online || !status) return std::nullopt;
  std::string key = std::string("topology|") + kVersion + "|" + std::string(trim(*boot)) + "|" +
                    std::string(trim(*online));
  for (const char* field : {"Cpus_allowed_list", "Mems_allowed_list"})
    key += "|" + std::string(find_value(*status, field).value_or(""));
  auto nodes = fs.read_line("/sys/devices/system/node/online");
  key += "|" + std::string(nodes ? trim(*nodes) : "");
  if (nodes)
    for (auto n : core::parse_cpu_list(trim(*nodes)).value_or(std::vector<std::uint32_t>{})) {
      auto meminfo = fs.read("/sys/devices/system/node/node" + std::to_string(n) + "/meminfo");
      auto total = meminfo ? node_mem_total(*meminfo) : std::nullopt;
      if (!total) return std::nullopt;  // a node's memory unknown: no cache
      key += "|" + std::string(*total);
    }
  return key;
}

std::string topology_json(const Topology& t) {
  nlohmann::json caches = nlohmann::json::array();
  for (const auto& c : t.caches)
    caches.push_back({c.level, c.type, c.size_bytes, c.instances});
  return nlohmann::json{{"packages", t.packages},
                        {"cores", t.cores},
                        {"threads", t.threads},
                        {"numa_nodes", t.numa_nodes},
                        {"numa_memory", t.numa_memory},
                        {"memory_only", t.memory_only},
                        {"caches", caches}}
      .dump();
}

/// A cached topology; nothing when the text is not one (the probe then reads it again).
std::optional<Topology> topology_from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  try {
    Topology t;
    t.packages = j.at("packages").get<std::uint32_t>();
    t.cores = j.at("cores").get<std::uint32_t>();
    t.threads = j.at("threads").get<std::uint32_t>();
    t.numa_nodes = j.at("numa_nodes").get<std::uint32_t>();
    t.numa_memory = j.at("numa_memory").get<std::vector<std::uint64_t>>();
    t.memory_only = j.at("memory_only").get<std::vector<std::uint32_t>>();
    for (const auto& c : j.at("caches")) {
      if (!c.is_array() || c.size() != 4) return std::nullopt;
      t.caches.push_back({c[0].get<int>(), c[1].get<std::string>(), c[2].get<std::uint64_t>(),
                          c[3].get<std::uint32_t>()});
    }
    if (t.threads == 0) return std::nullopt;
    return t;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

/// The topology from hwloc, or from the cache when nothing it depends on changed.
std::optional<Topology> read_topology(const core::Fs& fs, ToolCache* cache, std::string& error) {
  auto key = cache ? topology_key(fs) : std::nullopt;
  if (key)
    if (auto hit = cache->lookup(*key); hit && *hit)
      if (auto t = topology_from_json(**hit)) return t;
  auto t = hwloc_topology(fs, error);
  if (t && key) cache->replace("topology|", *key, topology_json(*t));
  return t;
}

std::optional<std::string> topology_xml(const core::Fs& fs) {
  HwlocTopology loaded;
  std::string error;
  if (!load_topology(fs, loaded, error)) return std::nullopt;
  char* buffer = nullptr;
  int length = 0;
  if (loaded.hwloc.hwloc_topology_export_xmlbuffer(loaded.topo, &buffer, &length, 0) != 0 ||
      !buffer)
    return std::nullopt;
  std::string xml = scrub_topology(
      std::string_view(buffer, length > 0 ? static_cast<std::size_t>(length - 1) : 0));
  loaded.hwloc.hwloc_free_xmlbuffer(loaded.topo, buffer);
  return xml;
}

namespace {

/// IBM Z machine types as IBM names them.
std::string s390_machine_name(const std::string& type) {
  static const std::map<std::string, std::string> kNames = {
      {"2964", "z13"},     {"2965", "z13s"},    {"3906", "z14"},
      {"3907", "z14 ZR1"}, {"8561", "z15"},     {"8562", "z15 T02"},
      {"3931", "z16"},     {"3932", "z16 A02"}, {"9175", "z17"}};
  auto it = kNames.find(type);
  return it == kNames.end() ? std::string() : it->second;
}

/// RISC-V mvendorid (JEDEC bank and id) of the vendors the kernel itself knows.
std::string riscv_vendor_name(std::uint64_t mvendorid) {
  switch (mvendorid) {
    case 0x489: return "SiFive";
    case 0x5b7: return "T-Head";
    case 0x31e: return "Andes";
    default: return "";
  }
}

/// Counts from /proc/cpuinfo when neither hwloc nor sysfs can help: "processor" lines, distinct
/// physical ids and core ids (MIPS and LoongArch say "package" and "core"). s390x says "#
/// processors" once; a 32-bit Arm kernel before 3.8 built without SMP prints one "Processor"
/// and no "processor" line: one CPU.
Topology cpuinfo_topology(std::string_view cpuinfo) {
  Topology t;
  std::set<std::string> packages;
  std::set<std::pair<std::string, std::string>> cores;
  std::string package;
  std::optional<std::uint64_t> s390_processors, s390_max_thread;
  bool arm_uniprocessor = false;
  for (auto line : core::split_lines(cpuinfo)) {
    auto pos = line.find(':');
    if (pos == std::string_view::npos) continue;
    auto key = trim(line.substr(0, pos));
    auto value = std::string(trim(line.substr(pos + 1)));
    if (key == "processor")
      ++t.threads;
    else if (key == "physical id" || key == "package") {
      package = value;
      packages.insert(value);
    } else if (key == "core id" || key == "core") {
      cores.emplace(package, value);
    } else if (key == "# processors") {
      s390_processors = parse_u64(value);
    } else if (key == "max thread id") {
      s390_max_thread = parse_u64(value);
    } else if (key == "Processor") {
      arm_uniprocessor = true;
    }
  }
  if (t.threads == 0 && s390_processors && *s390_processors > 0 && *s390_processors < (1u << 16)) {
    t.threads = static_cast<std::uint32_t>(*s390_processors);
    // SMT on z: max thread id 1 is two threads a core.
    auto per_core = s390_max_thread && *s390_max_thread < 8 ? *s390_max_thread + 1 : 1;
    t.cores = static_cast<std::uint32_t>((t.threads + per_core - 1) / per_core);
    t.packages = 1;
    return t;
  }
  if (t.threads == 0 && arm_uniprocessor) t.threads = 1;
  t.packages = packages.empty() ? (t.threads ? 1 : 0) : static_cast<std::uint32_t>(packages.size());
  t.cores = cores.empty() ? t.threads : static_cast<std::uint32_t>(cores.size());
  return t;
}

/// The number N of a sysfs entry named prefix + N ("cpu12", "node3"), or nothing.
std::optional<std::uint32_t> cpu_sysfs_entry_number(std::string_view name,
                                                    std::string_view prefix) {
  if (!core::starts_with(name, prefix) || name.size() == prefix.size()) return std::nullopt;
  auto n = parse_u64(name.substr(prefix.size()));
  if (!n || *n >= (1u << 16)) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

/// One CPU cache as sysfs describes it, keyed for counting instances.
struct CpuSysfsCacheKey {
  int level;
  int order;  // data and unified first, instruction after, as hwloc lists them
  std::string type;
  bool operator<(const CpuSysfsCacheKey& o) const {
    return std::tie(level, order, type) < std::tie(o.level, o.order, o.type);
  }
};

/// The topology from the kernel's own files, where hwloc's view is absent: packages and cores
/// from each online CPU's topology/physical_package_id and core_id, NUMA nodes with their CPUs
/// and MemTotal from /sys/devices/system/node, caches from cpuN/cache/indexM. Nothing, with
/// why, when the CPUs' topology files are missing or malformed.
std::optional<Topology> cpu_sysfs_topology(const core::Fs& fs, std::string& why) {
  const std::string base = core::paths::kSysCpu;
  std::vector<std::uint32_t> cpus;
  if (auto online = fs.read_line(base + "/online")) {
    auto list = core::parse_cpu_list(*online);
    if (!list || list->empty()) {
      why = base + "/online is not a CPU list";
      return std::nullopt;
    }
    cpus = std::move(*list);
  } else {
    // No online file: every cpuN that does not say it is offline.
    for (const auto& name : fs.list(base))
      if (auto n = cpu_sysfs_entry_number(name, "cpu"))
        if (fs.read_line(base + "/" + name + "/online").value_or("1") != "0") cpus.push_back(*n);
    std::sort(cpus.begin(), cpus.end());
  }
  if (cpus.empty()) {
    why = "no CPUs under " + base;
    return std::nullopt;
  }
  Topology t;
  std::set<std::int64_t> packages;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> cores;
  std::map<CpuSysfsCacheKey, std::pair<std::uint64_t, std::set<std::string>>> caches;
  for (auto cpu : cpus) {
    std::string dir = base + "/cpu" + std::to_string(cpu);
    auto package = fs.read_i64(dir + "/topology/physical_package_id");
    auto core_id = fs.read_i64(dir + "/topology/core_id");
    if (!package || !core_id) {
      why = dir + "/topology has no physical_package_id and core_id";
      return std::nullopt;
    }
    auto die = fs.read_i64(dir + "/topology/die_id").value_or(0);
    // -1: the firmware did not say (older Arm kernels); those CPUs share one package.
    packages.insert(std::max<std::int64_t>(*package, 0));
    cores.emplace(std::max<std::int64_t>(*package, 0), die, *core_id);
    ++t.threads;
    for (const auto& index : fs.list(dir + "/cache")) {
      if (!core::starts_with(index, "index")) continue;
      std::string cd = dir + "/cache/" + index;
      auto level = fs.read_u64(cd + "/level");
      auto type = fs.read_line(cd + "/type");
      auto size = fs.read_line(cd + "/size");
      auto shared = fs.read_line(cd + "/shared_cpu_list");
      auto bytes = size ? core::parse_size(*size) : std::nullopt;
      if (!level || *level < 1 || *level > 4 || !type || !bytes || !shared) continue;
      CpuSysfsCacheKey key{static_cast<int>(*level), *type == "Instruction" ? 1 : 0,
                           *type == "Data"          ? "data"
                           : *type == "Instruction" ? "instruction"
                                                    : "unified"};
      auto& entry = caches[key];
      entry.first = *bytes;
      entry.second.insert(std::string(trim(*shared)));
    }
  }
  t.packages = static_cast<std::uint32_t>(packages.size());
  t.cores = static_cast<std::uint32_t>(cores.size());
  for (const auto& [key, entry] : caches)
    t.caches.push_back(
        {key.level, key.type, entry.first, static_cast<std::uint32_t>(entry.second.size())});

  // NUMA nodes: node/online where it is there, else the nodeN directories.
  const std::string nodes_dir = core::paths::kSysNode;
  std::vector<std::uint32_t> nodes;
  if (auto online = fs.read_line(nodes_dir + "/online")) {
    if (auto list = core::parse_cpu_list(*online)) nodes = std::move(*list);
  } else {
    for (const auto& name : fs.list(nodes_dir))
      if (auto n = cpu_sysfs_entry_number(name, "node")) nodes.push_back(*n);
    std::sort(nodes.begin(), nodes.end());
  }
  t.numa_nodes = static_cast<std::uint32_t>(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::string nd = nodes_dir + "/node" + std::to_string(nodes[i]);
    auto node_cpus = fs.read_line(nd + "/cpulist");
    auto list = node_cpus ? core::parse_cpu_list(*node_cpus) : std::nullopt;
    if (list && list->empty()) t.memory_only.push_back(static_cast<std::uint32_t>(i));
    // "Node 0 MemTotal:       131072000 kB"
    std::optional<std::uint64_t> total;
    if (auto meminfo = fs.read(nd + "/meminfo"))
      if (auto line = node_mem_total(*meminfo)) total = core::parse_size(line->substr(9));
    if (total) t.numa_memory.push_back(*total);
  }
  if (t.numa_memory.size() != t.numa_nodes) t.numa_memory.clear();  // not for every node
  return t;
}

}  // namespace

CpuInfo parse_cpuinfo_identity(std::string_view cpuinfo) {
  CpuInfo info;
  auto block = first_block(cpuinfo);
  if (auto implementer = int_field(block, "CPU implementer", 16)) {
    auto part = int_field(block, "CPU part", 16);
    info.vendor = arm_implementer_name(*implementer);
    info.family = implementer;
    info.model = part;
    info.stepping = int_field(block, "CPU revision");
    if (part) info.microarchitecture = arm_microarchitecture(*implementer, *part);
    if (auto name = find_value(block, "model name"); name && !name->empty())
      info.label = std::string(*name);
    else if (auto old = find_value(block, "Processor"); old && !old->empty())
      info.label = std::string(*old);  // 32-bit Arm kernels before 3.8
    else if (!info.microarchitecture.empty())
      info.label = (info.vendor.empty() ? "" : info.vendor + " ") + info.microarchitecture;
    if (auto features = find_value(block, "Features"))
      info.isa_extensions = pick_extensions(*features, /*arm=*/true);
    return info;
  }
  if (auto vendor_id = find_value(block, "vendor_id"); vendor_id && *vendor_id == "IBM/S390") {
    // The summary names the machine type ("processor 0: version = FF, identification = ...,
    // machine = 8561"), which is what IBM's own tools call the model.
    info.vendor = "IBM";
    for (auto line : core::split_lines(block)) {
      auto at = line.find("machine = ");
      if (!core::starts_with(line, "processor ") || at == std::string_view::npos) continue;
      auto machine = trim(line.substr(at + 10));
      machine = machine.substr(0, machine.find_first_of(", "));
      if (parse_u64_base(machine, 16) && machine.size() == 4) {
        auto name = s390_machine_name(std::string(machine));
        info.label = name.empty() ? "IBM/S390 machine " + std::string(machine)
                                  : "IBM " + name + " (" + std::string(machine) + ")";
      }
      break;
    }
    if (info.label.empty()) info.label = "IBM/S390";
    return info;
  }
  if (auto vendor_id = find_value(block, "vendor_id")) {
    info.vendor = x86_vendor_name(std::string(*vendor_id));
    info.family = int_field(block, "cpu family");
    info.model = int_field(block, "model");
    info.stepping = int_field(block, "stepping");
    if (auto name = find_value(block, "model name")) info.label = std::string(*name);
    if (info.family && info.model)
      info.microarchitecture =
          x86_microarchitecture(info.vendor, *info.family, *info.model, info.stepping.value_or(0));
    if (auto flags = find_value(block, "flags"))
      info.isa_extensions = pick_extensions(*flags, /*arm=*/false);
    return info;
  }
  // LoongArch: "Model Name : Loongson-3A5000".
  if (auto name = find_value(block, "Model Name"); name && !name->empty()) {
    info.label = std::string(*name);
    if (core::starts_with(*name, "Loongson")) info.vendor = "Loongson";
    return info;
  }
  // MIPS: "cpu model : Cavium Octeon+ V0.1  FPU V0.0" names the core and its revision.
  if (auto model = find_value(block, "cpu model"); model && !model->empty()) {
    info.label = std::string(trim(model->substr(0, model->find("  FPU"))));
    return info;
  }
  // RISC-V: the devicetree's "uarch" where there is one, else the ISA string (whose
  // extensions after the first underscore are too long for a name).
  if (auto isa = find_value(block, "isa"); isa && core::starts_with(*isa, "rv")) {
    if (auto uarch = find_value(block, "uarch"); uarch && !uarch->empty())
      info.label = std::string(*uarch);
    else
      info.label = "RISC-V " + std::string(isa->substr(0, isa->find('_')));
    if (auto id = find_value(block, "mvendorid"))
      if (auto vendor = parse_u64_base(*id, 16)) info.vendor = riscv_vendor_name(*vendor);
    return info;
  }
  // POWER: "cpu : POWER9 (raw), altivec supported".
  if (auto cpu = find_value(block, "cpu"); cpu && !cpu->empty()) {
    auto name = cpu->substr(0, cpu->find(','));
    if (auto paren = name.find(" ("); paren != std::string_view::npos) name = name.substr(0, paren);
    info.label = std::string(trim(name));
    if (core::starts_with(name, "POWER")) info.vendor = "IBM";
    return info;
  }
  for (const char* key : {"model name", "uarch", "Processor"}) {
    if (auto v = find_value(block, key); v && !v->empty()) {
      info.label = std::string(*v);
      break;
    }
  }
  return info;
}

namespace {

/// Where hwloc's cache sizes came from. In a guest (the "hypervisor" CPU flag) every answer,
/// the kernel's cacheinfo included, is built from the CPUID the hypervisor chooses to present.
/// Elsewhere the kernel's cacheinfo, else what the processor itself reports (x86 CPUID).
CacheSource cache_source(const core::Fs& fs, std::string_view cpuinfo_block) {
  if (auto flags = find_value(cpuinfo_block, "flags"))
    for (auto f : core::split_ws(*flags))
      if (f == "hypervisor") return CacheSource::hypervisor;
  if (fs.exists("/sys/devices/system/cpu/cpu0/cache")) return CacheSource::kernel;
  return CacheSource::processor;
}

}  // namespace

CpuInfo probe_cpu(const core::Fs& fs, Note& note, ToolCache* cache) {
  auto cpuinfo = fs.read(core::paths::kProcCpuinfo);
  CpuInfo info;
  if (cpuinfo) {
    info = parse_cpuinfo_identity(*cpuinfo);
    auto fields = core::parse_key_values(*cpuinfo);
    if (fields.empty())
      note.unsupported("/proc/cpuinfo was read but holds no \"key : value\" fields");
    else if (info.label.empty() && info.vendor.empty())
      note.unsupported("/proc/cpuinfo was read but names no processor model or vendor");
  } else {
    note.unsupported(unreadable_reason(fs, core::paths::kProcCpuinfo, core::Fs::kDefaultMaxBytes));
  }
  auto block = cpuinfo ? first_block(*cpuinfo) : std::string_view{};
  // The kernel's own name for its architecture (uname -m), which a recorded host keeps in
  // /proc/sys/kernel/arch (Linux 6.1 and later); else this host's uname; else what
  // /proc/cpuinfo's layout says.
  if (auto arch = fs.read_line(core::paths::kProcArch); arch && !arch->empty()) {
    info.architecture = *arch;
  } else if (utsname u{}; fs.is_live() && ::uname(&u) == 0) {
    info.architecture = u.machine;
  } else if (cpuinfo) {
    info.architecture = cpuinfo_architecture(*cpuinfo);
  }

  std::string error;
  // hwloc's topology or the kernel's own files: the same counts, told apart by their source.
  auto take = [&](Topology& t, TopologySource source) {
    info.packages = std::max(t.packages, 1u);
    info.cores = t.cores ? t.cores : t.threads;
    info.threads = t.threads;
    info.numa_nodes = std::max(t.numa_nodes, 1u);
    if (!t.numa_memory.empty()) info.numa_memory_bytes = t.numa_memory;
    info.memory_only_numa_nodes = t.memory_only;
    info.caches = std::move(t.caches);
    info.topology_source = source;
    if (!info.caches.empty()) info.cache_source = cache_source(fs, block);
  };
  if (auto topo = read_topology(fs, cache, error)) {
    take(*topo, TopologySource::hwloc);
  } else if (std::string sysfs_error; auto sys = cpu_sysfs_topology(fs, sysfs_error)) {
    // The kernel's files say what hwloc would have: not a missing reading.
    core::log().debug("cpu: {}; topology read from sysfs", error);
    take(*sys, TopologySource::sysfs);
  } else {
    core::log().debug("cpu: {}; {}; counting from /proc/cpuinfo", error, sysfs_error);
    if (cpuinfo) {
      auto t = cpuinfo_topology(*cpuinfo);
      info.packages = t.packages;
      info.cores = t.cores;
      info.threads = t.threads;
      info.numa_nodes = t.threads ? 1 : 0;
      info.topology_source = TopologySource::proc_cpuinfo;
      if (t.threads == 0) note.unsupported("no processor counted in /proc/cpuinfo");
    }
    note.unsupported(error);
  }
  if (info.label.empty()) info.label = info.vendor.empty() ? "unknown CPU" : info.vendor + " CPU";
  // SVE's vector length is the implementation's choice (128 to 2048 bits); the kernel says what a
  // process starts with, in bytes.
  if (auto vl = fs.read_line("/proc/sys/abi/sve_default_vector_length"))
    if (auto bytes = core::parse_i64(core::trim(*vl)); bytes && *bytes >= 16 && *bytes <= 256)
      info.sve_vector_bits = static_cast<std::uint32_t>(*bytes * 8);
  return info;
}

namespace {

std::string cpu_list_label(const std::vector<std::uint32_t>& cpus) {
  if (cpus.empty()) return "cpu";
  std::string out = "cpu";
  std::size_t i = 0;
  while (i < cpus.size()) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
      ++j;
    if (i > 0) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

namespace {

/// cpufreq's related_cpus: CPU numbers separated by spaces ("0 1 2 3", as the kernel prints
/// it), ranges accepted; sorted and each once. Empty when a part is not a CPU number.
std::vector<std::uint32_t> cpufreq_related_cpus(std::string_view text) {
  std::set<std::uint32_t> cpus;
  for (auto word : split_ws(text))
    for (auto part : core::split(word, ',')) {
      if (part.empty()) continue;
      auto list = core::parse_cpu_list(part);
      if (!list) return {};
      cpus.insert(list->begin(), list->end());
    }
  return {cpus.begin(), cpus.end()};
}

}  // namespace

std::vector<ClockReading> read_cpu_clocks(const core::Fs& fs) {
  // cpufreq policies: one per frequency domain (kHz values). Policies with the same limits are
  // merged into one reading with the mean current frequency, so a 192-core server reports one
  // line per kind of core rather than 192 lines.
  struct Group {
    std::vector<std::uint32_t> cpus;
    double current_sum = 0;
    int current_n = 0;
  };
  std::map<std::pair<std::uint64_t, std::uint64_t>, Group> groups;
  std::set<std::uint32_t> covered;  // CPUs a domain already read includes
  // One policy directory; `own` is the CPU it is named after (policyN, cpuN/cpufreq), which
  // stands for the domain where related_cpus says nothing usable (missing, malformed, or not
  // naming that CPU: "0 0 0 0" on some vendor kernels).
  auto read_policy = [&](const std::string& dir, std::uint32_t own) {
    auto min = fs.read_u64(dir + "/cpuinfo_min_freq");
    auto max = fs.read_u64(dir + "/cpuinfo_max_freq");
    auto cur = fs.read_u64(dir + "/scaling_cur_freq");
    if (!cur) cur = fs.read_u64(dir + "/cpuinfo_cur_freq");
    auto related = fs.read_line(dir + "/related_cpus");
    auto cpus = related ? cpufreq_related_cpus(*related) : std::vector<std::uint32_t>{};
    if (std::find(cpus.begin(), cpus.end(), own) == cpus.end()) cpus = {own};
    covered.insert(cpus.begin(), cpus.end());
    auto& g = groups[{min.value_or(0), max.value_or(0)}];
    g.cpus.insert(g.cpus.end(), cpus.begin(), cpus.end());
    if (cur) {
      g.current_sum += static_cast<double>(*cur) / 1000.0;
      ++g.current_n;
    }
  };
  std::string base = core::paths::kSysCpufreq;
  for (const auto& name : fs.list(base))
    if (auto n = cpu_sysfs_entry_number(name, "policy")) read_policy(base + "/" + name, *n);
  if (groups.empty()) {
    // Kernels before policyN directories (and some vendor kernels): each CPU's cpufreq/, the
    // CPUs of one domain linked to the same directory. Read each domain once.
    std::string cpus_dir = core::paths::kSysCpu;
    std::vector<std::uint32_t> numbers;
    for (const auto& name : fs.list(cpus_dir))
      if (auto n = cpu_sysfs_entry_number(name, "cpu")) numbers.push_back(*n);
    std::sort(numbers.begin(), numbers.end());
    for (auto n : numbers) {
      std::string dir = cpus_dir + "/cpu" + std::to_string(n) + "/cpufreq";
      if (covered.count(n) || !fs.is_dir(dir)) continue;
      read_policy(dir, n);
    }
  }
  std::vector<ClockReading> out;
  for (auto& [limits, g] : groups) {
    std::sort(g.cpus.begin(), g.cpus.end());
    g.cpus.erase(std::unique(g.cpus.begin(), g.cpus.end()), g.cpus.end());
    ClockReading r;
    r.domain = cpu_list_label(g.cpus);
    r.source = "cpufreq";
    if (g.current_n) r.current_mhz = g.current_sum / g.current_n;
    if (limits.first) r.min_mhz = static_cast<double>(limits.first) / 1000.0;
    if (limits.second) r.max_mhz = static_cast<double>(limits.second) / 1000.0;
    if (r.current_mhz || r.max_mhz) out.push_back(std::move(r));
  }
  if (!out.empty()) return out;

  // No cpufreq (common in virtual machines): the kernel's "cpu MHz" lines.
  auto cpuinfo = fs.read(core::paths::kProcCpuinfo);
  if (!cpuinfo) return out;
  double sum = 0;
  int n = 0;
  for (auto [key, value] : core::parse_key_values(*cpuinfo)) {
    if (key != "cpu MHz") continue;
    if (auto mhz = core::parse_double(value); mhz && *mhz > 0 && *mhz < 1e6) {
      sum += *mhz;
      ++n;
    }
  }
  if (n) {
    ClockReading r;
    r.domain = "cpu";
    r.current_mhz = sum / n;
    r.source = "/proc/cpuinfo";
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<LoadAverage> read_loadavg(const core::Fs& fs, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<LoadAverage> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  auto text = fs.read(core::paths::kProcLoadavg, 4096);
  if (!text) return fail(unreadable_reason(fs, core::paths::kProcLoadavg, 4096));
  std::string_view whole = *text;
  auto line = trim(whole.substr(0, whole.find('\n')));
  auto parts = split_ws(line);
  if (parts.size() < 3)
    return fail(std::string("/proc/loadavg was read but holds ") +
                (line.empty() ? "nothing" : "fewer than three load averages"));
  double v[3];
  for (int i = 0; i < 3; ++i) {
    auto d = core::parse_double(parts[i]);
    // A load average is a finite count of runnable tasks: never negative, never NaN.
    if (!d || !std::isfinite(*d) || *d < 0 || *d > 1e9)
      return fail("/proc/loadavg was read but \"" + std::string(parts[i].substr(0, 32)) +
                  "\" is not a load average");
    v[i] = *d;
  }
  return LoadAverage{v[0], v[1], v[2]};
}

/// errno in words, the same in every locale: a diagnostic is read by people and by tests alike,
/// and a snapshot must not change with the reader's LANG.
std::string loadavg_errno_words(int error) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  if (const char* words = ::strerrordesc_np(error)) return words;
#endif
  return "error " + std::to_string(error);
}

std::string unreadable_reason(const core::Fs& fs, std::string_view path, std::size_t max_bytes) {
  std::string name(path);
  int fd = fs.open(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return "cannot read " + name + ": " + loadavg_errno_words(errno);
  struct stat st {};
  std::string reason;
  if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
    reason = name + " is a FIFO, not the kernel's file";
  } else if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    reason = name + " is not a regular file";
  } else {
    std::string data;
    char buf[8192];
    ssize_t n = 0;
    while (data.size() <= max_bytes && (n = ::read(fd, buf, sizeof buf)) > 0)
      data.append(buf, static_cast<std::size_t>(n));
    if (n < 0)
      reason = "cannot read " + name + ": " + loadavg_errno_words(errno);
    else if (data.size() > max_bytes)
      reason = name + " is larger than " + std::to_string(max_bytes) + " bytes";
    else if (data.find('\0') != std::string::npos)
      reason = name + " was read but holds binary bytes (NUL), not text";
    else
      reason = "cannot read " + name;
  }
  ::close(fd);
  return reason;
}

std::string read_hostname(const core::Fs& fs) {
  auto name = fs.read_line(core::paths::kProcHostname);
  return name ? *name : std::string();
}

}  // namespace mainboard::host
