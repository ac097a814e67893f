#include "mainboard/gather.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/atomic_file.hpp"
#include "core/environ.hpp"
#include "core/fs.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/probes.hpp"
#include "mainboard/error.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/nvidia.hpp"

namespace mainboard {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Runs commands for real and remembers every lookup and every output, so that a Machine probed
/// through it leaves behind exactly the record a replay needs.
class RecordingRunner final : public Runner {
 public:
  explicit RecordingRunner(std::string path) : live_(std::move(path)) {}

  std::optional<std::string> find_executable(std::string_view name) const override {
    auto found = live_.find_executable(name);
    std::lock_guard<std::mutex> lock(mutex_);
    if (found) executables_[std::string(name)] = *found;
    return found;
  }

  std::vector<CommandResult> run_all(const std::vector<Command>& commands) const override {
    auto results = live_.run_all(commands);
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < commands.size(); ++i)
      if (results[i].started && !results[i].timed_out) runs_.emplace_back(commands[i].argv, results[i]);
    return results;
  }

  std::map<std::string, std::string> executables() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return executables_;
  }
  std::vector<std::pair<std::vector<std::string>, CommandResult>> runs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return runs_;
  }

 private:
  LocalRunner live_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::string> executables_;
  mutable std::vector<std::pair<std::vector<std::string>, CommandResult>> runs_;
};

class Writer {
 public:
  Writer(fs::path root, GatherReport& report) : root_(std::move(root)), report_(report) {}

  void file(const std::string& path, const std::string& content) {
    auto target = root_ / path.substr(1);
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary);
    out << content;
    if (!out) throw Error("cannot write " + target.string());
    ++report_.files;
  }

  void link(const std::string& path, const std::string& target) {
    auto at = root_ / path.substr(1);
    std::error_code ec;
    fs::create_directories(at.parent_path(), ec);
    fs::remove(at, ec);
    fs::create_symlink(target, at, ec);
    if (ec) throw Error("cannot write " + at.string() + ": " + ec.message());
    ++report_.files;
  }

  /// Copies a file of the live system when it can be read; false when it cannot.
  bool copy(const core::Fs& live, const std::string& path) {
    auto text = live.read(path);
    if (!text) return false;
    file(path, *text);
    return true;
  }

  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
  GatherReport& report_;
};

const char* kEnvironment[] = {
    "HOME", "USER", "LOGNAME", "PATH", "PWD", "TMPDIR", "SLURM_JOB_ID", "SLURM_JOB_NAME",
    "SLURM_ARRAY_TASK_ID", "SLURM_TMPDIR", "PBS_JOBID", "PBS_JOBNAME", "PBS_ARRAY_INDEX",
    "LSB_JOBID", "LSB_JOBNAME", "LSB_JOBINDEX", "JOB_ID", "JOB_NAME", "SGE_TASK_ID", "SGE_ROOT",
    "_CONDOR_SCRATCH_DIR", "FLUX_JOB_ID", "LOCAL_SCRATCH", "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER", "CUDA_HOME", "CUDA_PATH", "CC", "CXX", "CUDACXX"};

/// Attributes of a PCI device that the GPU and NPU providers read (and nothing else: no serial
/// numbers, no firmware blobs).
const char* kDeviceAttributes[] = {
    "vendor", "device", "revision", "product_name", "unique_id", "mem_info_vram_total",
    "mem_info_vram_used", "mem_info_gtt_total", "mem_info_gtt_used", "gpu_busy_percent",
    "mem_busy_percent", "pp_dpm_sclk", "pp_dpm_mclk", "pp_dpm_fclk", "pp_dpm_socclk",
    "current_link_speed", "current_link_width", "max_link_speed", "max_link_width",
    "npu_busy_time_us", "npu_current_frequency_mhz", "npu_max_frequency_mhz",
    "npu_memory_utilization", "device_type", "vbnv", "fw_version", "status", "module_id",
    "clk_cur_freq_mhz", "clk_max_freq_mhz", "max_power"};

/// Network mount sources name their server ("nfs01:/export", "10.0.0.5@o2ib:/scratch"): the
/// path stays, the host goes.
std::string scrub_mount_source(const std::string& source) {
  auto colon = source.find(":/");
  if (colon == std::string::npos || source.empty() || source[0] == '/') return source;
  auto at = source.find('@');
  std::string suffix = at != std::string::npos && at < colon ? source.substr(at, colon - at) : "";
  return "server" + suffix + source.substr(colon);
}

std::string scrub_mounts(const std::string& text, bool mountinfo) {
  std::string out;
  for (auto line : core::split_lines(text)) {
    auto fields = core::split_ws(line);
    std::size_t source_index = 0;
    if (mountinfo) {
      auto sep = std::find(fields.begin(), fields.end(), "-");
      source_index = sep == fields.end() ? fields.size() : static_cast<std::size_t>(sep - fields.begin()) + 2;
    }
    std::string rebuilt;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i) rebuilt += ' ';
      rebuilt += i == source_index ? scrub_mount_source(std::string(fields[i])) : std::string(fields[i]);
    }
    out += rebuilt + "\n";
  }
  return out;
}

/// dmidecode's serial numbers and asset tags, system_profiler's serials and UUIDs.
std::string scrub_output(const std::vector<std::string>& argv, std::string text,
                         const std::string& hostname) {
  auto base = fs::path(argv.front()).filename().string();
  if (base == "dmidecode") {
    static const std::regex serial(R"((Serial Number|Asset Tag):[^\n]*)");
    return std::regex_replace(text, serial, "$1: scrubbed");
  }
  if (base == "system_profiler") {
    static const std::regex ids(
        R"re(("(serial_number|provisioning_UDID|platform_UUID|_spdisplays_display-serial-number)"\s*:\s*)"[^"]*")re");
    return std::regex_replace(text, ids, "$1\"00000000-0000-0000-0000-000000000000\"");
  }
  if (base == "hostname") return hostname + "\n";
  return text;
}

void copy_tree(const core::Fs& live, Writer& w, const std::string& dir,
               const std::function<bool(const std::string&)>& keep, int depth = 0) {
  if (depth > 6) return;
  for (const auto& name : live.list(dir)) {
    std::string path = dir + "/" + name;
    if (live.readlink(path)) continue;  // links in these trees point outside them
    if (live.is_dir(path)) {
      if (keep(path + "/")) copy_tree(live, w, path, keep, depth + 1);
    } else if (keep(path)) {
      w.copy(live, path);
    }
  }
}

void gather_cpu(const core::Fs& live, Writer& w) {
  static const std::regex wanted(
      R"(/sys/devices/system/cpu/((online|possible|present)|cpu\d+/(|topology/.*|cache/(|index\d+/(|level|type|size|shared_cpu_map|shared_cpu_list|coherency_line_size|ways_of_associativity|physical_line_partition|number_of_sets|id)))|cpufreq/(|policy\d+/(|related_cpus|affected_cpus|cpuinfo_min_freq|cpuinfo_max_freq|scaling_cur_freq|cpuinfo_cur_freq|scaling_governor))))");
  copy_tree(live, w, core::paths::kSysCpu,
            [&](const std::string& p) { return std::regex_match(p, wanted); });
  static const std::regex node(
      R"(/sys/devices/system/node/((online|possible|has_cpu|has_memory)|node\d+/(|cpumap|cpulist|meminfo|distance)))");
  copy_tree(live, w, core::paths::kSysNode, [&](const std::string& p) { return std::regex_match(p, node); });
}

void gather_pci_class(const core::Fs& live, Writer& w, const std::string& klass, bool cards_only) {
  for (const auto& name : live.list(klass)) {
    if (cards_only && (!core::starts_with(name, "card") || name.find('-') != std::string::npos)) continue;
    std::string entry = klass + "/" + name;
    auto bus = live.link_name(entry + "/device");
    if (!bus) continue;
    std::string device = "/sys/devices/pci0000:00/" + *bus;
    w.link(entry + "/device", "../../../devices/pci0000:00/" + *bus);
    if (auto driver = live.link_name(entry + "/device/driver"))
      w.link(device + "/driver", "../../../bus/pci/drivers/" + *driver);
    for (const char* attr : kDeviceAttributes) {
      auto text = live.read(entry + "/device/" + attr, 1u << 20);
      if (text) w.file(device + "/" + attr, *text);
    }
    for (const auto& hw : live.list(entry + "/device/hwmon")) {
      static const std::regex sensor(R"(name|temp\d+_(label|input|crit|emergency)|power1_(average|input|cap)|fan1_input|pwm1)");
      for (const auto& f : live.list(entry + "/device/hwmon/" + hw))
        if (std::regex_match(f, sensor))
          if (auto text = live.read(entry + "/device/hwmon/" + hw + "/" + f, 4096))
            w.file(device + "/hwmon/" + hw + "/" + f, *text);
    }
  }
}

void gather_cgroup(const core::Fs& live, Writer& w) {
  auto self = live.read(core::paths::kProcSelfCgroup);
  auto mountinfo = live.read(core::paths::kProcSelfMountinfo);
  if (!self || !mountinfo) return;
  for (auto line : core::split_lines(*mountinfo)) {
    auto sep = line.find(" - ");
    if (sep == std::string_view::npos) continue;
    auto left = core::split_ws(line.substr(0, sep));
    auto right = core::split_ws(line.substr(sep + 3));
    if (left.size() < 5 || right.empty() || (right[0] != "cgroup" && right[0] != "cgroup2")) continue;
    std::string mount(left[4]);
    for (auto entry : core::split_lines(*self)) {
      auto second = entry.find(':', entry.find(':') + 1);
      if (second == std::string_view::npos) continue;
      std::string rel(entry.substr(second + 1));
      // Every directory from the mount point down to the process's cgroup, as far as visible.
      std::string dir = mount;
      std::vector<std::string> chain{dir};
      for (auto part : core::split(rel, '/'))
        if (!part.empty()) chain.push_back(dir += "/" + std::string(part));
      for (const auto& d : chain)
        for (const char* f : {"memory.max", "memory.current", "memory.swap.max", "cgroup.controllers",
                              "memory.limit_in_bytes", "memory.usage_in_bytes",
                              "memory.memsw.limit_in_bytes"})
          w.copy(live, d + "/" + f);
    }
  }
}

void gather_identity(const core::Fs& live, Writer& w) {
  // Only this user's lines: the rest of the accounts are not ours to copy.
  auto status = live.read(core::paths::kProcSelfStatus);
  if (status) {
    std::string kept;
    for (auto line : core::split_lines(*status))
      if (core::starts_with(line, "Name:") || core::starts_with(line, "Uid:") || core::starts_with(line, "Gid:"))
        kept += std::string(line) + "\n";
    w.file(core::paths::kProcSelfStatus, kept);
  }
  std::string uid = std::to_string(::geteuid());
  std::string user, gid;
  if (auto passwd = live.read(core::paths::kEtcPasswd)) {
    for (auto line : core::split_lines(*passwd)) {
      auto f = core::split(line, ':');
      if (f.size() >= 4 && f[2] == uid) {
        w.file(core::paths::kEtcPasswd, std::string(line) + "\n");
        user = std::string(f[0]);
        gid = std::string(f[3]);
      }
    }
  }
  if (auto groups = live.read(core::paths::kEtcGroup)) {
    std::string kept;
    for (auto line : core::split_lines(*groups)) {
      auto f = core::split(line, ':');
      if (f.size() < 4) continue;
      bool member = f[2] == gid;
      for (auto m : core::split(f[3], ','))
        if (!user.empty() && core::trim(m) == user) member = true;
      if (member) kept += std::string(f[0]) + ":x:" + std::string(f[2]) + ":" + (f[2] == gid ? "" : user) + "\n";
    }
    w.file(core::paths::kEtcGroup, kept);
  }
}

/// The NVIDIA readings in the fake driver libraries' scenario format (tests/fakes/scenario.hpp).
json gpu_scenario(const Machine& machine) {
  const auto& cuda = machine.cuda_stack();
  // "12.4" → 12040, the driver API's encoding.
  auto major_minor = [](const std::string& text) -> std::pair<long, long> {
    auto dot = text.find('.');
    if (dot == std::string::npos) return {0, 0};
    auto major = core::parse_u64(std::string_view(text).substr(0, dot));
    auto minor = core::parse_u64(std::string_view(text).substr(dot + 1));
    if (!major || !minor) return {0, 0};
    return {static_cast<long>(*major), static_cast<long>(*minor)};
  };
  auto [cuda_major, cuda_minor] = major_minor(cuda.cuda_driver_version);
  long cuda_version = cuda_major * 1000 + cuda_minor * 10;
  json devices = json::array();
  for (const auto& g : machine.gpus()) {
    if (!dynamic_cast<const NvidiaGpu*>(g.get())) continue;
    const auto& i = g->info();
    auto snap = g->gpu_snapshot();
    const auto& t = snap.telemetry;
    json d = {{"name", i.label}, {"uuid", i.uuid}, {"pci_bus_id", i.pci_bus_id}};
    if (auto [cc_major, cc_minor] = major_minor(i.compute_capability); cc_major)
      d["cc"] = {cc_major, cc_minor};
    if (i.sm_count) d["sm_count"] = *i.sm_count;
    if (i.memory_clock_mhz) d["memory_clock_khz"] = static_cast<long long>(*i.memory_clock_mhz) * 1000;
    if (i.memory_bus_width_bits) d["bus_width"] = *i.memory_bus_width_bits;
    d["pageable_memory_access"] = i.coherent ? 1 : 0;
    d["concurrent_managed_access"] = 1;
    d["host_page_tables"] = i.coherent ? 1 : 0;
    if (t.memory.supported) {
      auto used = t.memory.used_bytes.value_or(0), free = t.memory.free_bytes.value_or(0);
      d["memory"] = {{"total", t.memory.total_bytes}, {"used", used},
                     {"reserved", t.memory.total_bytes > used + free ? t.memory.total_bytes - used - free : 0}};
    }
    json clocks = json::object(), max = json::object();
    for (const auto& c : t.clocks) {
      if (c.current_mhz) clocks[c.domain] = static_cast<long long>(*c.current_mhz);
      if (c.max_mhz) max[c.domain] = static_cast<long long>(*c.max_mhz);
    }
    d["clocks"] = clocks;
    d["max_clocks"] = max;
    if (t.utilization.supported)
      d["utilization"] = {{"gpu", t.utilization.compute_pct.value_or(0)}, {"memory", t.utilization.memory_pct.value_or(0)}};
    if (t.thermal.temperature_c) d["temperature"] = *t.thermal.temperature_c;
    if (t.thermal.slowdown_c) d["slowdown"] = *t.thermal.slowdown_c;
    if (t.thermal.shutdown_c) d["shutdown"] = *t.thermal.shutdown_c;
    unsigned long long bits = 0;
    for (unsigned long long bit = 1; bit <= 0x100; bit <<= 1)
      for (const auto& name : decode_clock_event_reasons(bit))
        if (std::find(t.thermal.throttle_reasons.begin(), t.thermal.throttle_reasons.end(), name) !=
            t.thermal.throttle_reasons.end())
          bits |= bit;
    d["clock_event_reasons"] = bits;
    if (t.energy.power_w) d["power_mw"] = static_cast<long long>(*t.energy.power_w * 1000);
    if (t.energy.power_limit_w) d["power_limit_mw"] = static_cast<long long>(*t.energy.power_limit_w * 1000);
    if (t.energy.energy_j) d["energy_mj"] = static_cast<long long>(*t.energy.energy_j * 1000);
    json pcie = json::object();
    if (snap.pcie.tx_kbps) pcie["tx_kbps"] = *snap.pcie.tx_kbps;
    if (snap.pcie.rx_kbps) pcie["rx_kbps"] = *snap.pcie.rx_kbps;
    if (snap.pcie.link_gen) pcie["gen"] = *snap.pcie.link_gen;
    if (snap.pcie.link_width) pcie["width"] = *snap.pcie.link_width;
    if (snap.pcie.max_link_gen) pcie["max_gen"] = *snap.pcie.max_link_gen;
    if (snap.pcie.max_link_width) pcie["max_width"] = *snap.pcie.max_link_width;
    d["pcie"] = pcie;
    if (snap.fan_speed_pct) d["fan_pct"] = *snap.fan_speed_pct;
    json procs = json::array();
    for (const auto& p : snap.processes)
      procs.push_back({{"pid", p.pid}, {"used_memory", p.used_memory_bytes.value_or(~0ull)}});
    d["processes"] = procs;
    if (i.mig_enabled && *i.mig_enabled) {
      json migs = json::array();
      for (const auto& m : i.mig_devices)
        migs.push_back({{"uuid", m.uuid}, {"name", i.label}, {"gpu_instance_id", m.gpu_instance_id.value_or(0)},
                        {"compute_instance_id", m.compute_instance_id.value_or(0)},
                        {"memory", {{"total", m.memory_total_bytes.value_or(0)}, {"used", 0}}}});
      d["mig"] = migs;
    }
    devices.push_back(std::move(d));
  }
  return {{"driver_version", cuda.driver_version}, {"nvml_version", cuda.nvml.version},
          {"cuda_driver_version", cuda_version}, {"devices", devices}};
}

}  // namespace

GatherReport gather_host(const fs::path& dir, const GatherOptions& options) {
  GatherReport report;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create " + dir.string() + ": " + ec.message());
  if (!options.force && fs::directory_iterator(dir, ec) != fs::directory_iterator())
    throw Error(dir.string() + " is not empty (use --force to write into it anyway)");
  Writer w(fs::absolute(dir), report);
  core::Fs live("/");

  // Identity and topology.
  for (const char* f : {core::paths::kProcCpuinfo, core::paths::kProcMeminfo, core::paths::kProcLoadavg,
                        core::paths::kProcSelfCgroup, core::paths::kProcArch, core::paths::kProcOsrelease})
    w.copy(live, f);
  w.file(core::paths::kProcHostname, options.hostname + "\n");
  if (auto text = live.read(core::paths::kProcSelfMountinfo)) w.file(core::paths::kProcSelfMountinfo, scrub_mounts(*text, true));
  if (auto text = live.read(core::paths::kProcSelfMounts)) w.file(core::paths::kProcSelfMounts, scrub_mounts(*text, false));
  gather_identity(live, w);
  gather_cpu(live, w);
  for (const char* f : {"board_vendor", "board_name", "board_version", "bios_vendor", "bios_version",
                        "bios_date", "sys_vendor", "product_name", "product_version"})
    w.copy(live, std::string(core::paths::kSysDmiId) + "/" + f);
  for (const auto& b : live.list(core::paths::kSysBlock)) {
    std::string d = std::string(core::paths::kSysBlock) + "/" + b;
    for (const char* f : {"/size", "/removable", "/queue/rotational", "/device/model"}) w.copy(live, d + f);
  }
  gather_cgroup(live, w);
  gather_pci_class(live, w, core::paths::kSysClassDrm, true);
  gather_pci_class(live, w, core::paths::kSysClassAccel, false);
  for (const auto& node : live.list(core::paths::kSysKfdNodes))
    w.copy(live, std::string(core::paths::kSysKfdNodes) + "/" + node + "/properties");

  fs::create_directories(w.root() / ".mainboard", ec);
  // The environment the probes read.
  auto env = core::process_environment();
  json recorded_env = json::object();
  for (const char* name : kEnvironment)
    if (auto v = core::env_set(env, name)) recorded_env[name] = *v;
  core::write_file_atomic(w.root() / ".mainboard/environment.json", recorded_env.dump(1) + "\n");

  // Probe through a recording runner: whatever the probes look up or run is what a replay needs.
  auto recorder = std::make_shared<RecordingRunner>(core::env_value(env, "PATH").value_or(""));
  Machine::Options mo;
  mo.sysroot = "/";
  mo.runner = recorder;
  mo.toolchain_cache = false;  // run every version probe, so its output is recorded
  Machine machine(mo);
  auto snapshot = machine.snapshot();
  json commands = json::array();
  for (const auto& [argv, result] : recorder->runs()) {
    commands.push_back({{"argv", argv}, {"exit_code", result.exit_code},
                        {"stdout", scrub_output(argv, result.out, options.hostname)},
                        {"stderr", result.err}});
    ++report.commands;
  }
  json record = {{"executables", recorder->executables()}, {"commands", commands}};
  core::write_file_atomic(w.root() / ".mainboard/commands.json", record.dump(1) + "\n");

  // Free space of every filesystem the snapshot looked at, and which scratch places are writable.
  json space = json::object();
  std::string writable;
  auto note_space = [&](const std::string& mount) {
    if (mount.empty() || space.contains(mount)) return;
    if (auto s = live.space(mount)) space[mount] = {{"size_bytes", s->size_bytes}, {"free_bytes", s->free_bytes}};
  };
  note_space("/");
  for (const auto& f : snapshot.disk.filesystems) note_space(f.mount_point);
  auto mounts = host::parse_mounts(live.read(core::paths::kProcSelfMounts).value_or(""));
  for (const auto& c : snapshot.scratch.candidates) {
    if (auto m = host::mount_for(mounts, c.path)) note_space(m->mount_point);
    if (c.usable) {
      writable += c.path + "\n";
      std::error_code e;
      fs::create_directories(w.root() / c.path.substr(1), e);
    } else if (live.is_dir(c.path)) {
      std::error_code e;
      fs::create_directories(w.root() / c.path.substr(1), e);
    }
  }
  for (const auto& f : snapshot.disk.filesystems) {
    std::error_code e;
    if (!f.path.empty() && f.path[0] == '/') fs::create_directories(w.root() / f.path.substr(1), e);
  }
  core::write_file_atomic(w.root() / ".mainboard/space.json", space.dump(1) + "\n");
  core::write_file_atomic(w.root() / ".mainboard/writable", writable);

  // The CUDA libraries are found by name: an empty file of the same name stands for each.
  for (const auto* lib : {&snapshot.cuda.cupti, &snapshot.cuda.cuda_runtime})
    if (lib->found && !lib->path.empty() && lib->path[0] == '/') w.file(lib->path, "");

  // Process names of whatever runs on the GPUs, and the NVIDIA readings as a fake scenario.
  for (const auto& g : snapshot.gpus)
    for (const auto& p : g.processes) w.copy(live, "/proc/" + std::to_string(p.pid) + "/comm");
  auto scenario = gpu_scenario(machine);
  if (!scenario["devices"].empty()) {
    core::write_file_atomic(w.root() / ".mainboard/gpu-scenario.json", scenario.dump(1) + "\n");
    report.gpu_scenario = true;
    report.notes.push_back(
        "NVIDIA readings are in .mainboard/gpu-scenario.json: replay them with the fake driver "
        "libraries (MAINBOARD_NVML_LIBRARY, MAINBOARD_CUDA_LIBRARY and "
        "MAINBOARD_FAKE_GPU_SCENARIO; see tests/fakes/)");
  }
  return report;
}

}  // namespace mainboard
