#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

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

/// The first processor's block of /proc/cpuinfo (identity fields repeat for every CPU).
std::string_view first_block(std::string_view cpuinfo) {
  auto end = cpuinfo.find("\n\n");
  return end == std::string_view::npos ? cpuinfo : cpuinfo.substr(0, end);
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

std::string infer_architecture(std::string_view block, bool live) {
  if (find_value(block, "CPU implementer")) return "aarch64";
  if (auto flags = find_value(block, "flags")) {
    for (auto f : split_ws(*flags))
      if (f == "lm") return "x86_64";
    return "i686";
  }
  if (find_value(block, "isa")) return "riscv64";
  if (auto cpu = find_value(block, "cpu"); cpu && cpu->find("POWER") != std::string_view::npos)
    return "ppc64le";
  if (live) {
    utsname u{};
    if (::uname(&u) == 0) return u.machine;
  }
  return "";
}

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
      auto at = meminfo ? meminfo->find("MemTotal:") : std::string::npos;
      if (at == std::string::npos) return std::nullopt;  // a node's memory unknown: no cache
      auto end = meminfo->find('\n', at);
      key += "|" + meminfo->substr(at, end == std::string::npos ? end : end - at);
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

/// Counts from /proc/cpuinfo when hwloc cannot help: distinct physical ids and core ids.
Topology cpuinfo_topology(std::string_view cpuinfo) {
  Topology t;
  std::set<std::string> packages;
  std::set<std::pair<std::string, std::string>> cores;
  std::string package;
  for (auto line : core::split_lines(cpuinfo)) {
    auto pos = line.find(':');
    if (pos == std::string_view::npos) continue;
    auto key = trim(line.substr(0, pos));
    auto value = std::string(trim(line.substr(pos + 1)));
    if (key == "processor")
      ++t.threads;
    else if (key == "physical id") {
      package = value;
      packages.insert(value);
    } else if (key == "core id") {
      cores.emplace(package, value);
    }
  }
  t.packages = packages.empty() ? (t.threads ? 1 : 0) : static_cast<std::uint32_t>(packages.size());
  t.cores = cores.empty() ? t.threads : static_cast<std::uint32_t>(cores.size());
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
    else if (!info.microarchitecture.empty())
      info.label = (info.vendor.empty() ? "" : info.vendor + " ") + info.microarchitecture;
    if (auto features = find_value(block, "Features"))
      info.isa_extensions = pick_extensions(*features, /*arm=*/true);
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
  // Other architectures: take whichever name field the kernel prints.
  for (const char* key : {"model name", "uarch", "cpu", "Processor"}) {
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
  } else {
    note.unsupported("cannot read /proc/cpuinfo");
  }
  auto block = cpuinfo ? first_block(*cpuinfo) : std::string_view{};
  if (auto arch = fs.read_line(core::paths::kProcArch); arch && !arch->empty())
    info.architecture = *arch;
  else
    info.architecture = infer_architecture(block, fs.is_live());

  std::string error;
  if (auto topo = read_topology(fs, cache, error)) {
    info.packages = std::max(topo->packages, 1u);
    info.cores = topo->cores ? topo->cores : topo->threads;
    info.threads = topo->threads;
    info.numa_nodes = std::max(topo->numa_nodes, 1u);
    if (!topo->numa_memory.empty()) info.numa_memory_bytes = topo->numa_memory;
    info.memory_only_numa_nodes = topo->memory_only;
    info.caches = std::move(topo->caches);
    info.topology_source = TopologySource::hwloc;
    if (!info.caches.empty()) info.cache_source = cache_source(fs, block);
  } else {
    core::log().debug("cpu: {}; counting from /proc/cpuinfo", error);
    if (cpuinfo) {
      auto t = cpuinfo_topology(*cpuinfo);
      info.packages = t.packages;
      info.cores = t.cores;
      info.threads = t.threads;
      info.numa_nodes = t.threads ? 1 : 0;
      info.topology_source = TopologySource::proc_cpuinfo;
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
  std::string base = core::paths::kSysCpufreq;
  for (const auto& name : fs.list(base)) {
    if (!core::starts_with(name, "policy")) continue;
    std::string dir = base + "/" + name;
    auto min = fs.read_u64(dir + "/cpuinfo_min_freq");
    auto max = fs.read_u64(dir + "/cpuinfo_max_freq");
    auto cur = fs.read_u64(dir + "/scaling_cur_freq");
    if (!cur) cur = fs.read_u64(dir + "/cpuinfo_cur_freq");
    auto related = fs.read_line(dir + "/related_cpus");
    auto& g = groups[{min.value_or(0), max.value_or(0)}];
    if (related)
      if (auto cpus = core::parse_cpu_list(*related))
        g.cpus.insert(g.cpus.end(), cpus->begin(), cpus->end());
    if (cur) {
      g.current_sum += static_cast<double>(*cur) / 1000.0;
      ++g.current_n;
    }
  }
  std::vector<ClockReading> out;
  for (auto& [limits, g] : groups) {
    std::sort(g.cpus.begin(), g.cpus.end());
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

std::optional<LoadAverage> read_loadavg(const core::Fs& fs) {
  auto line = fs.read_line(core::paths::kProcLoadavg);
  if (!line) return std::nullopt;
  auto parts = split_ws(*line);
  if (parts.size() < 3) return std::nullopt;
  auto a = core::parse_double(parts[0]), b = core::parse_double(parts[1]),
       c = core::parse_double(parts[2]);
  if (!a || !b || !c) return std::nullopt;
  return LoadAverage{*a, *b, *c};
}

std::string read_hostname(const core::Fs& fs) {
  auto name = fs.read_line(core::paths::kProcHostname);
  return name ? *name : std::string();
}

}  // namespace mainboard::host
