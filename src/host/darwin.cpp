#include "host/darwin.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace mainboard::host::darwin {

namespace {

constexpr const char* kSysctlKeys[] = {"machdep.cpu.brand_string",
                                       "machdep.cpu.vendor",
                                       "machdep.cpu.family",
                                       "machdep.cpu.model",
                                       "machdep.cpu.stepping",
                                       "hw.machine",
                                       "hw.packages",
                                       "hw.physicalcpu",
                                       "hw.logicalcpu",
                                       "hw.memsize",
                                       "hw.l1dcachesize",
                                       "hw.l1icachesize",
                                       "hw.l2cachesize",
                                       "hw.l3cachesize",
                                       "hw.perflevel0.physicalcpu",
                                       "hw.perflevel1.physicalcpu",
                                       "hw.perflevel0.cpusperl2",
                                       "hw.cpufrequency_max"};

std::optional<std::map<std::string, std::string>> sysctl(const Runner& runner, std::string& error) {
  auto exe = runner.find_executable("sysctl");
  if (!exe) {
    error = "sysctl not found";
    return std::nullopt;
  }
  Command cmd;
  cmd.argv = {*exe};
  for (const char* k : kSysctlKeys)
    cmd.argv.emplace_back(k);
  cmd.timeout = std::chrono::milliseconds(3000);
  auto r = runner.run(cmd);
  // An unknown key (hw.l3cachesize on Apple silicon) makes sysctl exit non-zero after printing
  // the others, so the exit status alone says little.
  if (!r.started || r.timed_out) {
    error = r.error.empty() ? "sysctl timed out" : r.error;
    return std::nullopt;
  }
  auto values = parse_sysctl(r.out);
  if (values.empty()) {
    error = "sysctl printed nothing";
    return std::nullopt;
  }
  return values;
}

std::optional<std::uint64_t> number(const std::map<std::string, std::string>& m, const char* key) {
  auto it = m.find(key);
  if (it == m.end()) return std::nullopt;
  return core::parse_u64(it->second);
}

std::string value(const std::map<std::string, std::string>& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() ? std::string() : it->second;
}

}  // namespace

std::map<std::string, std::string> parse_sysctl(std::string_view text) {
  std::map<std::string, std::string> out;
  for (auto line : core::split_lines(text)) {
    // "hw.memsize: 68719476736"; very old releases print "hw.memsize = 68719476736".
    auto pos = line.find(": ");
    if (pos == std::string_view::npos) pos = line.find(" = ");
    if (pos == std::string_view::npos) continue;
    auto key = core::trim(line.substr(0, pos));
    if (key.empty() || key.find(' ') != std::string_view::npos) continue;
    out[std::string(key)] = std::string(core::trim(line.substr(pos + 2)));
  }
  return out;
}

std::optional<VmStat> parse_vm_stat(std::string_view text) {
  VmStat v;
  bool any = false;
  for (auto line : core::split_lines(text)) {
    // "Mach Virtual Memory Statistics: (page size of 16384 bytes)"
    if (auto pos = line.find("page size of "); pos != std::string_view::npos) {
      auto rest = line.substr(pos + 13);
      if (auto n = core::parse_u64(rest.substr(0, rest.find(' ')));
          n && *n >= 512 && *n <= (1u << 24))
        v.page_size = *n;
      continue;
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto label = std::string(core::trim(line.substr(0, colon)));
    auto count = core::trim(line.substr(colon + 1));
    if (!count.empty() && count.back() == '.') count.remove_suffix(1);
    if (auto n = core::parse_u64(count)) {
      v.pages[label] = *n;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return v;
}

bool available(const Runner& runner) {
  return runner.find_executable("sysctl").has_value() &&
         runner.find_executable("vm_stat").has_value();
}

CpuInfo probe_cpu(const Runner& runner, Note& note) {
  CpuInfo info;
  std::string error;
  auto m = sysctl(runner, error);
  if (!m) {
    note.unsupported(error);
    return info;
  }
  info.label = value(*m, "machdep.cpu.brand_string");
  info.architecture = value(*m, "hw.machine");
  auto vendor = value(*m, "machdep.cpu.vendor");
  if (vendor == "GenuineIntel")
    info.vendor = "Intel";
  else if (core::starts_with(info.label, "Apple"))
    info.vendor = "Apple";
  else
    info.vendor = vendor;
  auto small = [&](const char* key) -> std::optional<int> {
    auto v = number(*m, key);
    if (!v || *v > 0x7fffffff) return std::nullopt;
    return static_cast<int>(*v);
  };
  info.family = small("machdep.cpu.family");
  info.model = small("machdep.cpu.model");
  info.stepping = small("machdep.cpu.stepping");
  auto count = [&](const char* key) {
    return static_cast<std::uint32_t>(number(*m, key).value_or(0));
  };
  info.packages = std::max(count("hw.packages"), 1u);
  info.cores = count("hw.physicalcpu");
  info.threads = count("hw.logicalcpu");
  info.numa_nodes = 1;
  if (auto p = number(*m, "hw.perflevel0.physicalcpu"), e = number(*m, "hw.perflevel1.physicalcpu");
      p)
    info.microarchitecture =
        std::to_string(*p) + "P + " + std::to_string(e.value_or(0)) + "E cores";
  auto cache = [&](int level, const char* type, const char* key, std::uint32_t instances) {
    if (auto bytes = number(*m, key); bytes && *bytes > 0)
      info.caches.push_back({level, type, *bytes, instances});
  };
  std::uint32_t per_l2 =
      static_cast<std::uint32_t>(number(*m, "hw.perflevel0.cpusperl2").value_or(0));
  cache(1, "data", "hw.l1dcachesize", info.cores);
  cache(1, "instruction", "hw.l1icachesize", info.cores);
  cache(2, "unified", "hw.l2cachesize", per_l2 ? std::max(info.cores / per_l2, 1u) : 1u);
  cache(3, "unified", "hw.l3cachesize", 1);
  info.topology_source = TopologySource::sysctl;
  if (!info.caches.empty()) info.cache_source = CacheSource::sysctl;
  if (info.label.empty()) info.label = info.vendor.empty() ? "unknown CPU" : info.vendor + " CPU";
  return info;
}

Reading<Memory> read_memory(const Runner& runner, std::string scope, bool unified) {
  Memory mem;
  mem.scope = std::move(scope);
  mem.unified = unified;
  mem.source = MemorySource::sysctl;
  std::string error;
  auto m = sysctl(runner, error);
  auto total = m ? number(*m, "hw.memsize") : std::nullopt;
  if (!total || *total == 0) return Reading<Memory>::none(m ? "no hw.memsize" : error);
  mem.total_bytes = *total;
  auto exe = runner.find_executable("vm_stat");
  if (!exe) return mem;
  auto r = runner.run(Command{{*exe}, std::chrono::milliseconds(3000)});
  if (!r.ok()) return mem;
  auto vm = parse_vm_stat(r.out);
  if (!vm) return mem;
  auto pages = [&](const char* label) {
    auto it = vm->pages.find(label);
    return it == vm->pages.end() ? 0 : it->second;
  };
  std::uint64_t used =
      (pages("Pages active") + pages("Pages wired down") + pages("Pages occupied by compressor")) *
      vm->page_size;
  mem.used_bytes = std::min(used, *total);
  mem.free_bytes = *total - *mem.used_bytes;
  return mem;
}

}  // namespace mainboard::host::darwin
