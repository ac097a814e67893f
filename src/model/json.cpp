// JSON field lists of every model. Each list is the single source of both directions.
#include "mainboard/meter.hpp"
#include "mainboard/snapshot.hpp"
#include "model/json_fields.hpp"

namespace mainboard {

// Each enum's to_string and JSON conversions, from its one names table (model/enum_names.hpp).
#define MAINBOARD_DEFINE_ENUM(Type)   \
  const char* to_string(Type value) { \
    return detail::name_of(value);    \
  }                                   \
  MAINBOARD_DEFINE_ENUM_JSON(Type)

MAINBOARD_DEFINE_ENUM(UnitKind)
MAINBOARD_DEFINE_ENUM(StorageTier)
MAINBOARD_DEFINE_ENUM(ProbeStatus)
MAINBOARD_DEFINE_ENUM(XidSource)
MAINBOARD_DEFINE_ENUM(ToolCategory)
MAINBOARD_DEFINE_ENUM(MemorySource)
MAINBOARD_DEFINE_ENUM(TopologySource)
MAINBOARD_DEFINE_ENUM(CacheSource)
#undef MAINBOARD_DEFINE_ENUM

template <class V>
void fields(V& v, Memory& m) {
  v("total_bytes", m.total_bytes);
  v("used_bytes", m.used_bytes);
  v("free_bytes", m.free_bytes);
  v("scope", m.scope);
  v("unified", m.unified);
  v("source", m.source);
}
MAINBOARD_DEFINE_JSON(Memory)
MAINBOARD_DEFINE_READING_JSON(Memory)

template <class V>
void fields(V& v, DimmCard& m) {
  v("locator", m.locator);
  v("bank_locator", m.bank_locator);
  v("size_bytes", m.size_bytes);
  v("type", m.type);
  v("form_factor", m.form_factor);
  v("speed_mts", m.speed_mts);
  v("configured_speed_mts", m.configured_speed_mts);
  v("manufacturer", m.manufacturer);
  v("part_number", m.part_number);
  v("rank", m.rank);
}
MAINBOARD_DEFINE_JSON(DimmCard)

template <class V>
void fields(V& v, MemoryHardware& m) {
  v("cards", m.cards);
  v("swap_total_bytes", m.swap_total_bytes);
  v("swap_used_bytes", m.swap_used_bytes);
}
void to_json(nlohmann::json& j, const MemoryHardware& value) {
  json_detail::write_model(j, value);
}
void from_json(const nlohmann::json& j, MemoryHardware& value) {
  json_detail::read_model(j, value, "MemoryHardware");
  // Schema 1 said the cards were unread beside them: "cards_supported": false, "cards_reason".
  if (auto s = j.find("cards_supported"); s != j.end() && s->is_boolean() && !s->get<bool>()) {
    auto r = j.find("cards_reason");
    value.cards = Unavailable{ProbeStatus::unsupported,
                              r != j.end() && r->is_string() ? r->get<std::string>() : ""};
  }
}

template <class V>
void fields(V& v, ClockReading& m) {
  v("domain", m.domain);
  v("current_mhz", m.current_mhz);
  v("min_mhz", m.min_mhz);
  v("max_mhz", m.max_mhz);
  v("source", m.source);
}
MAINBOARD_DEFINE_JSON(ClockReading)

template <class V>
void fields(V& v, Utilization& m) {
  v("compute_pct", m.compute_pct);
  v("memory_pct", m.memory_pct);
}
MAINBOARD_DEFINE_JSON(Utilization)
MAINBOARD_DEFINE_READING_JSON(Utilization)

template <class V>
void fields(V& v, Energy& m) {
  v("power_w", m.power_w);
  v("power_limit_w", m.power_limit_w);
  v("energy_j", m.energy_j);
}
MAINBOARD_DEFINE_JSON(Energy)
MAINBOARD_DEFINE_READING_JSON(Energy)

template <class V>
void fields(V& v, Thermal& m) {
  v("temperature_c", m.temperature_c);
  v("slowdown_c", m.slowdown_c);
  v("shutdown_c", m.shutdown_c);
  v("throttle_reasons", m.throttle_reasons);
}
MAINBOARD_DEFINE_JSON(Thermal)
MAINBOARD_DEFINE_READING_JSON(Thermal)

template <class V>
void fields(V& v, UnitSnapshot& m) {
  v("name", m.name);
  v("unit_name", m.unit_name);
  v("kind", m.kind);
  v("vendor", m.vendor);
  v("timestamp_ns", m.timestamp_ns);
  v("clocks", m.clocks);
  v("memory", m.memory);
  v("utilization", m.utilization);
  v("energy", m.energy);
  v("thermal", m.thermal);
}
MAINBOARD_DEFINE_JSON(UnitSnapshot)

template <class V>
void fields(V& v, CacheInfo& m) {
  v("level", m.level);
  v("type", m.type);
  v("size_bytes", m.size_bytes);
  v("instances", m.instances);
}
MAINBOARD_DEFINE_JSON(CacheInfo)

template <class V>
void fields(V& v, CpuInfo& m) {
  v("label", m.label);
  v("vendor", m.vendor);
  v("architecture", m.architecture);
  v("microarchitecture", m.microarchitecture);
  v("family", m.family);
  v("model", m.model);
  v("stepping", m.stepping);
  v("packages", m.packages);
  v("cores", m.cores);
  v("threads", m.threads);
  v("numa_nodes", m.numa_nodes);
  v("numa_memory_bytes", m.numa_memory_bytes);
  v("caches", m.caches);
  v("isa_extensions", m.isa_extensions);
  v("topology_source", m.topology_source);
  v("cache_source", m.cache_source);
  v("memory_only_numa_nodes", m.memory_only_numa_nodes);
  v("sve_vector_bits", m.sve_vector_bits);
}
MAINBOARD_DEFINE_JSON(CpuInfo)

template <class V>
void fields(V& v, CpuSnapshot& m) {
  v("info", m.info);
  v("clocks", m.clocks);
  v("load_1m", m.load_1m);
  v("load_5m", m.load_5m);
  v("load_15m", m.load_15m);
}
MAINBOARD_DEFINE_JSON(CpuSnapshot)

template <class V>
void fields(V& v, Board& m) {
  v("vendor", m.vendor);
  v("model", m.model);
  v("version", m.version);
  v("bios_vendor", m.bios_vendor);
  v("bios_version", m.bios_version);
  v("bios_date", m.bios_date);
}
MAINBOARD_DEFINE_JSON(Board)
MAINBOARD_DEFINE_READING_JSON(Board)

template <class V>
void fields(V& v, Scheduler& m) {
  v("name", m.name);
  v("binary", m.binary);
}
MAINBOARD_DEFINE_JSON(Scheduler)

template <class V>
void fields(V& v, Job& m) {
  v("scheduler", m.scheduler);
  v("id", m.id);
  v("name", m.name);
  v("array_task", m.array_task);
}
MAINBOARD_DEFINE_JSON(Job)

template <class V>
void fields(V& v, Environment& m) {
  v("user", m.user);
  v("group", m.group);
  v("groups", m.groups);
  v("scheduler", m.scheduler);
  v("schedulers", m.schedulers);
  v("job", m.job);
}
MAINBOARD_DEFINE_JSON(Environment)

template <class V>
void fields(V& v, OperatingSystem& m) {
  v("name", m.name);
  v("id", m.id);
  v("version_id", m.version_id);
  v("kernel", m.kernel);
  v("libc", m.libc);
  v("page_size_bytes", m.page_size_bytes);
}
MAINBOARD_DEFINE_JSON(OperatingSystem)

template <class V>
void fields(V& v, HostTuning& m) {
  v("governors", m.governors);
  v("boost", m.boost);
  v("boost_control", m.boost_control);
  v("smt_active", m.smt_active);
  v("aslr", m.aslr);
  v("transparent_hugepages", m.transparent_hugepages);
  v("perf_event_paranoid", m.perf_event_paranoid);
}
MAINBOARD_DEFINE_JSON(HostTuning)

template <class V>
void fields(V& v, DetectedTool& m) {
  v("name", m.name);
  v("category", m.category);
  v("path", m.path);
  v("version", m.version);
  v("available", m.available);
}
MAINBOARD_DEFINE_JSON(DetectedTool)

template <class V>
void fields(V& v, Toolchain& m) {
  v("tools", m.tools);
}
MAINBOARD_DEFINE_JSON(Toolchain)

template <class V>
void fields(V& v, CompilerConfig& m) {
  v("c_compiler", m.c_compiler);
  v("cxx_compiler", m.cxx_compiler);
  v("cuda_compiler", m.cuda_compiler);
  v("cuda_architectures", m.cuda_architectures);
}
MAINBOARD_DEFINE_JSON(CompilerConfig)

template <class V>
void fields(V& v, CgroupMemory& m) {
  v("version", m.version);
  v("path", m.path);
  v("limit_bytes", m.limit_bytes);
  v("usage_bytes", m.usage_bytes);
  v("swap_limit_bytes", m.swap_limit_bytes);
  v("limit_source", m.limit_source);
}
MAINBOARD_DEFINE_JSON(CgroupMemory)
MAINBOARD_DEFINE_READING_JSON(CgroupMemory)

// Pressure lists its fields in its own header (mainboard/pressure.hpp); these lines export its
// conversions to users (a model without them still converts inside a snapshot: ListsFields).
MAINBOARD_DEFINE_JSON(StallShare)
MAINBOARD_DEFINE_JSON(ResourcePressure)
MAINBOARD_DEFINE_JSON(Pressure)
MAINBOARD_DEFINE_READING_JSON(Pressure)

// The fabric, sensors, memory health and PCI topology models list their fields in their headers.
MAINBOARD_DEFINE_JSON(InfinibandPort)
MAINBOARD_DEFINE_JSON(InfinibandDevice)
MAINBOARD_DEFINE_JSON(Infiniband)
MAINBOARD_DEFINE_READING_JSON(Infiniband)
MAINBOARD_DEFINE_JSON(NetworkInterface)
MAINBOARD_DEFINE_JSON(Network)
MAINBOARD_DEFINE_READING_JSON(Network)
MAINBOARD_DEFINE_JSON(TemperatureSensor)
MAINBOARD_DEFINE_JSON(Temperatures)
MAINBOARD_DEFINE_READING_JSON(Temperatures)
MAINBOARD_DEFINE_JSON(EnergyCounter)
MAINBOARD_DEFINE_JSON(EnergyCounters)
MAINBOARD_DEFINE_READING_JSON(EnergyCounters)
MAINBOARD_DEFINE_JSON(HugePagePool)
MAINBOARD_DEFINE_JSON(HugePages)
MAINBOARD_DEFINE_READING_JSON(HugePages)
MAINBOARD_DEFINE_JSON(MemoryController)
MAINBOARD_DEFINE_JSON(MemoryErrors)
MAINBOARD_DEFINE_READING_JSON(MemoryErrors)
MAINBOARD_DEFINE_JSON(PciDevice)
MAINBOARD_DEFINE_JSON(PciTopology)
MAINBOARD_DEFINE_READING_JSON(PciTopology)

template <class V>
void fields(V& v, BlockDevice& m) {
  v("name", m.name);
  v("model", m.model);
  v("size_bytes", m.size_bytes);
  v("rotational", m.rotational);
  v("nvme", m.nvme);
  v("removable", m.removable);
}
MAINBOARD_DEFINE_JSON(BlockDevice)

template <class V>
void fields(V& v, Filesystem& m) {
  v("role", m.role);
  v("path", m.path);
  v("mount_point", m.mount_point);
  v("type", m.type);
  v("device", m.device);
  v("size_bytes", m.size_bytes);
  v("free_bytes", m.free_bytes);
}
MAINBOARD_DEFINE_JSON(Filesystem)

template <class V>
void fields(V& v, Disk& m) {
  v("devices", m.devices);
  v("filesystems", m.filesystems);
}
MAINBOARD_DEFINE_JSON(Disk)

template <class V>
void fields(V& v, ScratchCandidate& m) {
  v("path", m.path);
  v("origin", m.origin);
  v("fs_type", m.fs_type);
  v("tier", m.tier);
  v("free_bytes", m.free_bytes);
  v("usable", m.usable);
  v("reason", m.reason);
}
MAINBOARD_DEFINE_JSON(ScratchCandidate)

template <class V>
void fields(V& v, Scratch& m) {
  v("found", m.found);
  v("path", m.path);
  v("fs_type", m.fs_type);
  v("tier", m.tier);
  v("free_bytes", m.free_bytes);
  v("candidates", m.candidates);
}
MAINBOARD_DEFINE_JSON(Scratch)

template <class V>
void fields(V& v, PcieReading& m) {
  v("tx_kbps", m.tx_kbps);
  v("rx_kbps", m.rx_kbps);
  v("link_gen", m.link_gen);
  v("link_width", m.link_width);
  v("max_link_gen", m.max_link_gen);
  v("max_link_width", m.max_link_width);
}
MAINBOARD_DEFINE_JSON(PcieReading)
MAINBOARD_DEFINE_READING_JSON(PcieReading)

template <class V>
void fields(V& v, GpuProcess& m) {
  v("pid", m.pid);
  v("name", m.name);
  v("used_memory_bytes", m.used_memory_bytes);
  v("host_pid", m.host_pid);
  v("container_pid", m.container_pid);
  v("visible", m.visible);
}
MAINBOARD_DEFINE_JSON(GpuProcess)

template <class V>
void fields(V& v, MigDevice& m) {
  v("uuid", m.uuid);
  v("gpu_instance_id", m.gpu_instance_id);
  v("compute_instance_id", m.compute_instance_id);
  v("memory_total_bytes", m.memory_total_bytes);
}
MAINBOARD_DEFINE_JSON(MigDevice)

template <class V>
void fields(V& v, GpuInfo& m) {
  v("index", m.index);
  v("provider", m.provider);
  v("label", m.label);
  v("vendor", m.vendor);
  v("uuid", m.uuid);
  v("pci_bus_id", m.pci_bus_id);
  v("architecture", m.architecture);
  v("arch_key", m.arch_key);
  v("compute_capability", m.compute_capability);
  v("sm_count", m.sm_count);
  v("core_count", m.core_count);
  v("peak_bandwidth_gbs", m.peak_bandwidth_gbs);
  v("memory_clock_mhz", m.memory_clock_mhz);
  v("memory_bus_width_bits", m.memory_bus_width_bits);
  v("driver_version", m.driver_version);
  v("memory_total_bytes", m.memory_total_bytes);
  v("coherent", m.coherent);
  v("mig_enabled", m.mig_enabled);
  v("mig_devices", m.mig_devices);
  v("metal_support", m.metal_support);
}
MAINBOARD_DEFINE_JSON(GpuInfo)

template <class V>
void fields(V& v, GpuLink& m) {
  v("link", m.link);
  v("active", m.active);
  v("version", m.version);
  v("tx_bytes", m.tx_bytes);
  v("rx_bytes", m.rx_bytes);
  v("replay_errors", m.replay_errors);
  v("recovery_errors", m.recovery_errors);
  v("crc_errors", m.crc_errors);
  v("remote_pci_bus_id", m.remote_pci_bus_id);
  v("remote_kind", m.remote_kind);
}
MAINBOARD_DEFINE_JSON(GpuLink)

template <class V>
void fields(V& v, XidError& m) {
  v("code", m.code);
  v("meaning", m.meaning);
  v("pid", m.pid);
  v("process", m.process);
  v("uptime_s", m.uptime_s);
}
MAINBOARD_DEFINE_JSON(XidError)

template <class V>
void fields(V& v, GpuUnitActivity& m) {
  v("sm_active_pct", m.sm_active_pct);
  v("sm_occupancy_pct", m.sm_occupancy_pct);
  v("tensor_active_pct", m.tensor_active_pct);
  v("dram_bandwidth_pct", m.dram_bandwidth_pct);
  v("graphics_active_pct", m.graphics_active_pct);
  v("window_s", m.window_s);
}
MAINBOARD_DEFINE_JSON(GpuUnitActivity)
MAINBOARD_DEFINE_READING_JSON(GpuUnitActivity)

template <class V>
void fields(V& v, GpuHealth& m) {
  v("persistence_mode", m.persistence_mode);
  v("ecc_enabled", m.ecc_enabled);
  v("ecc_corrected_volatile", m.ecc_corrected_volatile);
  v("ecc_uncorrected_volatile", m.ecc_uncorrected_volatile);
  v("ecc_uncorrected_aggregate", m.ecc_uncorrected_aggregate);
  v("remapped_rows_correctable", m.remapped_rows_correctable);
  v("remapped_rows_uncorrectable", m.remapped_rows_uncorrectable);
  v("remap_pending", m.remap_pending);
  v("remap_failed", m.remap_failed);
  v("retired_pages_pending", m.retired_pages_pending);
  v("xid_errors", m.xid_errors);
  v("last_xid", m.last_xid);
  v("xid_source", m.xid_source);
  v("xid_since_unix_s", m.xid_since_unix_s);
  v("links", m.links);
  v("unavailable", m.unavailable);
}
void to_json(nlohmann::json& j, const GpuHealth& value) {
  json_detail::write_model(j, value);
}
void from_json(const nlohmann::json& j, GpuHealth& value) {
  // Schema 1 listed the parts not read as strings, "ecc: NVML_ERROR_NOT_SUPPORTED".
  auto old = j.is_object() ? j.find("unsupported") : j.end();
  if (old != j.end() && !j.contains("unavailable")) {
    auto now = j;
    now["unavailable"] = nlohmann::json::object();
    json_detail::read_model(now, value, "GpuHealth");
  } else {
    json_detail::read_model(j, value, "GpuHealth");
  }
  if (old != j.end() && old->is_array())
    for (const auto& item : *old) {
      if (!item.is_string()) continue;
      auto text = item.get<std::string>();
      auto colon = text.find(": ");
      value.unavailable.emplace(
          text.substr(0, colon),
          Unavailable{ProbeStatus::unsupported,
                      colon == std::string::npos ? "" : text.substr(colon + 2)});
    }
}

template <class V>
void fields(V& v, Unavailable& m) {
  v("status", m.status);
  v("reason", m.reason);
}
MAINBOARD_DEFINE_JSON(Unavailable)

template <class V>
void fields(V& v, GpuSnapshot& m) {
  v("info", m.info);
  v("telemetry", m.telemetry);
  v("memory_regions", m.memory_regions);
  v("pcie", m.pcie);
  v("fan_speed_pct", m.fan_speed_pct);
  v("processes", m.processes);
  v("health", m.health);
  v("unit_activity", m.unit_activity);
}
MAINBOARD_DEFINE_JSON(GpuSnapshot)

template <class V>
void fields(V& v, NpuInfo& m) {
  v("index", m.index);
  v("provider", m.provider);
  v("label", m.label);
  v("vendor", m.vendor);
  v("architecture", m.architecture);
  v("driver", m.driver);
  v("pci_bus_id", m.pci_bus_id);
}
MAINBOARD_DEFINE_JSON(NpuInfo)

template <class V>
void fields(V& v, NpuSnapshot& m) {
  v("info", m.info);
  v("telemetry", m.telemetry);
}
MAINBOARD_DEFINE_JSON(NpuSnapshot)

template <class V>
void fields(V& v, LibraryInfo& m) {
  v("found", m.found);
  v("path", m.path);
  v("version", m.version);
  v("reason", m.reason);
}
MAINBOARD_DEFINE_JSON(LibraryInfo)

template <class V>
void fields(V& v, CudaStack& m) {
  v("driver_version", m.driver_version);
  v("cuda_driver_version", m.cuda_driver_version);
  v("nvml", m.nvml);
  v("cuda_driver", m.cuda_driver);
  v("cupti", m.cupti);
  v("cuda_runtime", m.cuda_runtime);
  v("nvcc_path", m.nvcc_path);
  v("nvcc_version", m.nvcc_version);
}
MAINBOARD_DEFINE_JSON(CudaStack)

template <class V>
void fields(V& v, Diagnostic& m) {
  v("probe", m.probe);
  v("status", m.status);
  v("reason", m.reason);
  v("duration_ns", m.duration_ns);
}
MAINBOARD_DEFINE_JSON(Diagnostic)

template <class V>
void fields(V& v, DomainEnergy& m) {
  v("domain", m.domain);
  v("source", m.source);
  v("joules", m.joules);
  v("mean_w", m.mean_w);
}
MAINBOARD_DEFINE_JSON(DomainEnergy)

template <class V>
void fields(V& v, RegionEnergy& m) {
  v("domains", m.domains);
  v("total_j", m.total_j);
  v("mean_w", m.mean_w);
  v("unavailable", m.unavailable);
}
MAINBOARD_DEFINE_JSON(RegionEnergy)

template <class V>
void fields(V& v, CommandMeasurement& m) {
  v("argv", m.argv);
  v("exit_code", m.exit_code);
  v("signal", m.signal);
  v("wall_s", m.wall_s);
  v("user_s", m.user_s);
  v("system_s", m.system_s);
  v("peak_pss_bytes", m.peak_pss_bytes);
  v("peak_rss_bytes", m.peak_rss_bytes);
  v("peak_tree_rss_bytes", m.peak_tree_rss_bytes);
  v("max_process_rss_bytes", m.max_process_rss_bytes);
  v("peak_processes", m.peak_processes);
  v("major_faults", m.major_faults);
  v("minor_faults", m.minor_faults);
  v("voluntary_switches", m.voluntary_switches);
  v("involuntary_switches", m.involuntary_switches);
  v("fs_inputs", m.fs_inputs);
  v("fs_outputs", m.fs_outputs);
  v("peak_gpu_bytes", m.peak_gpu_bytes);
  v("peak_gpu_bytes_by_gpu", m.peak_gpu_bytes_by_gpu);
  v("samples", m.samples);
  v("interval_ms", m.interval_ms);
  v("energy", m.energy);
}
void to_json(nlohmann::json& j, const CommandMeasurement& value) {
  json_detail::write_model(j, value);
}
void from_json(const nlohmann::json& j, CommandMeasurement& value) {
  // A measurement written before energy was measured has no "energy": it is read, and its
  // energy says it was not recorded, rather than the whole file refused.
  if (j.is_object() && !j.contains("energy")) {
    auto with = j;
    with["energy"] = RegionEnergy{
        {}, std::nullopt, std::nullopt, {"not recorded by the version that measured it"}};
    json_detail::read_model(with, value, "CommandMeasurement");
    return;
  }
  json_detail::read_model(j, value, "CommandMeasurement");
}

template <class V>
void fields(V& v, MachineSnapshot& m) {
  v("schema_version", m.schema_version);
  v("timestamp_ns", m.timestamp_ns);
  v("unix_time_ns", m.unix_time_ns);
  v("gpus", m.gpus);
  v("npus", m.npus);
  // Each probe's member under its own name. A member two probes fill (one part each) is
  // visited once per row: written twice with the same value, read twice into the same place.
#define MAINBOARD_PROBE_FIELD(name, lifetime, after, Part, member, path) v(#member, m.member);
  MAINBOARD_HOST_PROBES(MAINBOARD_PROBE_FIELD)
#undef MAINBOARD_PROBE_FIELD
  v("diagnostics", m.diagnostics);
}

void to_json(nlohmann::json& j, const MachineSnapshot& value) {
  json_detail::write_model(j, value);
}

void from_json(const nlohmann::json& j, MachineSnapshot& value) {
  if (!j.is_object()) throw Error("MachineSnapshot: expected an object");
  auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer())
    throw Error("MachineSnapshot: missing schema_version");
  // Schema 1 said a reading was missing with "supported": false beside its fields; schema 2
  // puts {"unavailable": {"status", "reason"}} in its place. Both are read.
  auto read_version = version->get<std::int64_t>();
  if (read_version < kSnapshotSchemaVersionRead || read_version > kSnapshotSchemaVersion)
    throw Error("MachineSnapshot: schema_version " + version->dump() +
                " is not supported (this build reads " +
                std::to_string(kSnapshotSchemaVersionRead) + " to " +
                std::to_string(kSnapshotSchemaVersion) + ")");
  json_detail::AdditiveReading additive;
  json_detail::read_model(j, value, "MachineSnapshot");
  // Schema 1 wrote a board without DMI as empty strings, and why in the probe's diagnostic.
  if (read_version == 1 && value.board && value.board->empty()) {
    const auto* d = value.diagnostic("board");
    value.board = Reading<Board>::none(d && !d->reason.empty() ? d->reason : "no DMI fields");
  }
  // Read, it is this build's model: written again, it is in this build's layout.
  value.schema_version = kSnapshotSchemaVersion;
}

}  // namespace mainboard
