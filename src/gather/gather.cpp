// mainboard gather: a host as a sysroot tree that reproduces it anywhere. Nothing here lists
// which files matter: every probe of the table and every provider runs over a recording file
// system, environment and runner, and what they read, looked up and ran is what is written.
#include "mainboard/gather.hpp"

#include <unistd.h>

#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/beneath.hpp"
#include "core/environ.hpp"
#include "core/fs.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/probes.hpp"
#include "machine/probe_table.hpp"
#include "machine/record.hpp"
#include "mainboard/error.hpp"
#include "mainboard/nvidia.hpp"
#include "providers/provider.hpp"

namespace mainboard {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Runs commands through another runner and remembers every lookup and every output, so that
/// probes run through it leave behind exactly the record a replay needs.
class RecordingRunner final : public Runner {
 public:
  explicit RecordingRunner(std::shared_ptr<const Runner> inner) : inner_(std::move(inner)) {}

  std::optional<std::string> find_executable(std::string_view name) const override {
    auto found = inner_->find_executable(name);
    std::lock_guard<std::mutex> lock(mutex_);
    if (found) executables_[std::string(name)] = *found;
    return found;
  }

  std::vector<CommandResult> run_all(const std::vector<Command>& commands) const override {
    auto results = inner_->run_all(commands);
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < commands.size(); ++i)
      if (results[i].started && !results[i].timed_out)
        runs_.emplace_back(commands[i].argv, results[i]);
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
  std::shared_ptr<const Runner> inner_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::string> executables_;
  mutable std::vector<std::pair<std::vector<std::string>, CommandResult>> runs_;
};

/// Everything the probes found through the file system, keyed by the path they asked for.
class FsRecorder final : public core::FsObserver {
 public:
  void file(std::string_view path, const std::optional<std::string>& text) override {
    if (ignored(path) || !text) return;
    std::lock_guard<std::mutex> lock(mutex_);
    files[std::string(path)] = *text;
  }
  void directory(std::string_view path, const std::vector<std::string>& names) override {
    if (ignored(path)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto& entries = dirs[std::string(path)];
    entries.insert(names.begin(), names.end());
  }
  void kind(std::string_view path, bool exists, bool directory) override {
    if (ignored(path) || !exists) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (directory)
      dirs[std::string(path)];
    else
      existing_files[std::string(path)] = true;
  }
  void link(std::string_view path, const std::optional<std::string>& target) override {
    if (ignored(path) || !target) return;
    std::lock_guard<std::mutex> lock(mutex_);
    links[std::string(path)] = *target;
  }
  void space(std::string_view path, const std::optional<core::FsSpace>& s) override {
    if (!s) return;
    std::lock_guard<std::mutex> lock(mutex_);
    spaces[std::string(path)] = *s;
  }
  void writable(std::string_view path, bool w) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (w) writable_dirs.insert(std::string(path));
  }

  // Read once the probes are done.
  std::map<std::string, std::string> files;
  std::map<std::string, std::set<std::string>> dirs;
  std::map<std::string, bool> existing_files;
  std::map<std::string, std::string> links;
  std::map<std::string, core::FsSpace> spaces;
  std::set<std::string> writable_dirs;

 private:
  /// The record of a recorded host is not part of the host: gather writes it anew.
  static bool ignored(std::string_view path) {
    return core::starts_with(path, core::paths::kRecordDir);
  }
  std::mutex mutex_;
};

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
      source_index =
          sep == fields.end() ? fields.size() : static_cast<std::size_t>(sep - fields.begin()) + 2;
    }
    std::string rebuilt;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i) rebuilt += ' ';
      rebuilt +=
          i == source_index ? scrub_mount_source(std::string(fields[i])) : std::string(fields[i]);
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

/// Only this user's lines of the account files: the rest of the accounts are not ours to copy.
std::string scrub_status(const std::string& text) {
  std::string kept;
  for (auto line : core::split_lines(text))
    if (core::starts_with(line, "Name:") || core::starts_with(line, "Uid:") ||
        core::starts_with(line, "Gid:"))
      kept += std::string(line) + "\n";
  return kept;
}

struct Account {
  std::string uid, user, gid;
};

Account account_of(const std::map<std::string, std::string>& files) {
  Account a;
  a.uid = std::to_string(::geteuid());
  if (auto it = files.find(core::paths::kProcSelfStatus); it != files.end())
    if (auto uid = core::find_value(it->second, "Uid"))
      if (auto fields = core::split_ws(*uid); !fields.empty())
        a.uid = std::string(fields[1 < fields.size() ? 1 : 0]);
  if (auto it = files.find(core::paths::kEtcPasswd); it != files.end())
    for (auto line : core::split_lines(it->second)) {
      auto f = core::split(line, ':');
      if (f.size() >= 4 && f[2] == a.uid) {
        a.user = std::string(f[0]);
        a.gid = std::string(f[3]);
      }
    }
  return a;
}

std::string scrub_passwd(const std::string& text, const Account& a) {
  std::string kept;
  for (auto line : core::split_lines(text)) {
    auto f = core::split(line, ':');
    if (f.size() >= 4 && f[2] == a.uid) kept += std::string(line) + "\n";
  }
  return kept;
}

std::string scrub_group(const std::string& text, const Account& a) {
  std::string kept;
  for (auto line : core::split_lines(text)) {
    auto f = core::split(line, ':');
    if (f.size() < 4) continue;
    bool member = f[2] == a.gid;
    for (auto m : core::split(f[3], ','))
      if (!a.user.empty() && core::trim(m) == a.user) member = true;
    if (member)
      kept += std::string(f[0]) + ":x:" + std::string(f[2]) + ":" + (f[2] == a.gid ? "" : a.user) +
              "\n";
  }
  return kept;
}

/// What a file holds in the tree: the host's bytes, less what identifies the host or its people.
std::string scrubbed(const std::string& path, const std::string& text, const Account& a,
                     const GatherOptions& options) {
  if (path == core::paths::kProcHostname) return options.hostname + "\n";
  if (path == core::paths::kProcSelfMountinfo) return scrub_mounts(text, true);
  if (path == core::paths::kProcSelfMounts) return scrub_mounts(text, false);
  if (path == core::paths::kProcSelfStatus) return scrub_status(text);
  if (path == core::paths::kEtcPasswd) return scrub_passwd(text, a);
  if (path == core::paths::kEtcGroup) return scrub_group(text, a);
  return text;
}

/// Two readings of the live host come from the process rather than its files: the identity
/// through NSS (LDAP and SSSD users included) and the working directory. A recorded host gives
/// them as /proc/self/status, /etc/passwd and /etc/group lines and as $PWD, which are written
/// here from the readings themselves (group ids are renumbered: only the names are read).
void record_process_readings(const Environment& e, std::map<std::string, std::string>& files,
                             json& environment) {
  std::string uid = std::to_string(::geteuid());
  files[core::paths::kProcSelfStatus] = "Name:\tmainboard\nUid:\t" + uid + "\t" + uid + "\t" + uid +
                                        "\t" + uid + "\nGid:\t0\t0\t0\t0\n";
  files[core::paths::kEtcPasswd] = e.user + ":x:" + uid + ":0::/:/bin/sh\n";
  std::string groups = e.group + ":x:0:\n";
  int gid = 0;
  for (const auto& g : e.groups)
    if (g != e.group) groups += g + ":x:" + std::to_string(++gid) + ":" + e.user + "\n";
  files[core::paths::kEtcGroup] = groups;
  std::error_code ec;
  auto cwd = fs::current_path(ec);
  if (!ec) environment["PWD"] = cwd.string();
}

/// Writes the recording as a tree under `root`, the way the probes saw it: symbolic links they
/// read as links (relative, and inside the tree), files and directories under their names.
class Tree {
 public:
  Tree(const core::TreeWriter& out, const FsRecorder& r, GatherReport& report)
      : out_(out), r_(r), report_(report) {}

  /// A system path with every recorded link among its leading components replaced by where
  /// it points, so that a file read through a link lands where the link leads.
  std::string resolve(const std::string& path, int depth = 0) const {
    fs::path out("/");
    fs::path p = fs::path(path).lexically_normal();
    for (auto it = p.begin(); it != p.end(); ++it) {
      if (it->string() == "/") continue;
      fs::path next = (out / *it).lexically_normal();
      auto link = r_.links.find(next.string());
      if (link != r_.links.end() && depth < 8)
        next = resolve(target_of(next.string(), link->second), depth + 1);
      out = next;
    }
    return clamp(out.lexically_normal()).string();
  }

  // Every write goes through the TreeWriter: nothing already in the tree (a link planted in a
  // shared directory, an earlier gather's) is followed.
  void write_file(const std::string& path, const std::string& text) {
    out_.write(resolve(path), text);
    ++report_.files;
  }

  void write_link(const std::string& path, const std::string& target) {
    auto where =
        fs::path(resolve(fs::path(path).parent_path().string())) / fs::path(path).filename();
    auto to = fs::path(resolve(target_of(path, target)));
    out_.symlink(where.string(), to.lexically_relative(where.parent_path()).string());
    ++report_.files;
  }

  void make_dir(const std::string& path) { out_.make_dirs(resolve(path)); }

  /// An empty file where the probes saw one exist but never read it; nothing when something
  /// else is already there.
  void touch(const std::string& path) {
    if (out_.touch(resolve(path))) ++report_.empty_files;
  }

 private:
  /// Where a link at `path` points, as an absolute system path.
  static std::string target_of(const std::string& path, const std::string& target) {
    fs::path t(target);
    if (t.is_absolute()) return t.lexically_normal().string();
    return (fs::path(path).parent_path() / t).lexically_normal().string();
  }
  /// ".." past the root stays at the root, as the kernel has it.
  static fs::path clamp(const fs::path& p) {
    fs::path out("/");
    for (const auto& part : p)
      if (part != "/" && part != ".." && part != ".") out /= part;
    return out;
  }

  const core::TreeWriter& out_;
  const FsRecorder& r_;
  GatherReport& report_;
};

/// The NVIDIA readings in the fake driver libraries' scenario format (tests/fakes/scenario.hpp).
json gpu_scenario(const CudaStack& cuda, const std::vector<std::shared_ptr<Gpu>>& gpus) {
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
  for (const auto& g : gpus) {
    if (!dynamic_cast<const NvidiaGpu*>(g.get())) continue;
    const auto& i = g->info();
    auto snap = g->gpu_snapshot();
    const auto& t = snap.telemetry;
    const auto& util = t.utilization.or_empty();
    const auto& heat = t.thermal.or_empty();
    const auto& power_now = t.energy.or_empty();
    const auto& link = snap.pcie.or_empty();
    json d = {{"name", i.label}, {"uuid", i.uuid}, {"pci_bus_id", i.pci_bus_id}};
    if (auto [cc_major, cc_minor] = major_minor(i.compute_capability); cc_major)
      d["cc"] = {cc_major, cc_minor};
    if (i.sm_count) d["sm_count"] = *i.sm_count;
    if (i.memory_clock_mhz)
      d["memory_clock_khz"] = static_cast<long long>(*i.memory_clock_mhz) * 1000;
    if (i.memory_bus_width_bits) d["bus_width"] = *i.memory_bus_width_bits;
    d["pageable_memory_access"] = i.coherent ? 1 : 0;
    d["concurrent_managed_access"] = 1;
    d["host_page_tables"] = i.coherent ? 1 : 0;
    if (const auto& m = t.memory) {
      auto used = m->used_bytes.value_or(0), free = m->free_bytes.value_or(0);
      d["memory"] = {{"total", m->total_bytes},
                     {"used", used},
                     {"reserved", m->total_bytes > used + free ? m->total_bytes - used - free : 0}};
    }
    json clocks = json::object(), max = json::object();
    for (const auto& c : t.clocks) {
      if (c.current_mhz) clocks[c.domain] = static_cast<long long>(*c.current_mhz);
      if (c.max_mhz) max[c.domain] = static_cast<long long>(*c.max_mhz);
    }
    d["clocks"] = clocks;
    d["max_clocks"] = max;
    if (t.utilization.ok())
      d["utilization"] = {{"gpu", util.compute_pct.value_or(0)},
                          {"memory", util.memory_pct.value_or(0)}};
    if (heat.temperature_c) d["temperature"] = *heat.temperature_c;
    if (heat.slowdown_c) d["slowdown"] = *heat.slowdown_c;
    if (heat.shutdown_c) d["shutdown"] = *heat.shutdown_c;
    unsigned long long bits = 0;
    for (unsigned long long bit = 1; bit <= 0x100; bit <<= 1)
      for (const auto& name : decode_clock_event_reasons(bit))
        if (std::find(heat.throttle_reasons.begin(), heat.throttle_reasons.end(), name) !=
            heat.throttle_reasons.end())
          bits |= bit;
    d["clock_event_reasons"] = bits;
    if (power_now.power_w) d["power_mw"] = static_cast<long long>(*power_now.power_w * 1000);
    if (power_now.power_limit_w)
      d["power_limit_mw"] = static_cast<long long>(*power_now.power_limit_w * 1000);
    if (power_now.energy_j) d["energy_mj"] = static_cast<long long>(*power_now.energy_j * 1000);
    json pcie = json::object();
    if (link.tx_kbps) pcie["tx_kbps"] = *link.tx_kbps;
    if (link.rx_kbps) pcie["rx_kbps"] = *link.rx_kbps;
    if (link.link_gen) pcie["gen"] = *link.link_gen;
    if (link.link_width) pcie["width"] = *link.link_width;
    if (link.max_link_gen) pcie["max_gen"] = *link.max_link_gen;
    if (link.max_link_width) pcie["max_width"] = *link.max_link_width;
    d["pcie"] = pcie;
    if (snap.fan_speed_pct) d["fan_pct"] = *snap.fan_speed_pct;
    json procs = json::array();
    for (const auto& p : snap.processes)
      procs.push_back({{"pid", p.pid}, {"used_memory", p.used_memory_bytes.value_or(~0ull)}});
    d["processes"] = procs;
    if (i.mig_enabled && *i.mig_enabled) {
      json migs = json::array();
      for (const auto& m : i.mig_devices)
        migs.push_back({{"uuid", m.uuid},
                        {"name", i.label},
                        {"gpu_instance_id", m.gpu_instance_id.value_or(0)},
                        {"compute_instance_id", m.compute_instance_id.value_or(0)},
                        {"memory", {{"total", m.memory_total_bytes.value_or(0)}, {"used", 0}}}});
      d["mig"] = migs;
    }
    devices.push_back(std::move(d));
  }
  return {{"driver_version", cuda.driver_version},
          {"nvml_version", cuda.nvml.version},
          {"cuda_driver_version", cuda_version},
          {"devices", devices}};
}

}  // namespace

GatherReport gather_host(const fs::path& dir, const GatherOptions& options) {
  GatherReport report;
  std::error_code ec;
  if (!options.sysroot.empty() && !fs::is_directory(options.sysroot, ec))
    throw Error("cannot gather " + options.sysroot.string() + ": not a directory");
  core::TreeWriter out(dir);
  if (!options.force && !out.empty())
    throw Error(dir.string() + " is not empty (use --force to write into it anyway)");

  // The sources every probe reads through, each recording.
  auto recorder = std::make_shared<FsRecorder>();
  fs::path source = options.sysroot.empty() ? fs::path("/") : options.sysroot;
  auto files = std::make_shared<core::Fs>(source, recorder);
  bool live = files->is_live();
  machine::Sources sources;
  sources.fs = files;
  sources.env = machine::host_environment(*files);
  auto lookups = std::make_shared<core::EnvLookups>();
  sources.env.record_lookups(lookups);
  std::shared_ptr<const Runner> inner =
      live ? std::shared_ptr<const Runner>(
                 std::make_shared<LocalRunner>(core::env_value(sources.env, "PATH").value_or("")))
           : machine::recorded_runner(*files);
  auto runner = std::make_shared<RecordingRunner>(inner);
  sources.runner = runner;
  providers::Context context{files, sources.env, *runner};
  context.shared_runner = runner;
  std::vector<Diagnostic> ignored;
  auto gpus = providers::probe_all<Gpu>(providers::gpu_providers(), context, "gpu", ignored);
  auto npus = providers::probe_all<Npu>(providers::npu_providers(), context, "npu", ignored);
  sources.gpus = [&gpus]() -> const std::vector<std::shared_ptr<Gpu>>& { return gpus; };

  // Every probe and every unit's readings, once: that is what a replay asks for.
  MachineSnapshot snapshot;
  for (const auto& probe : machine::host_probes()) {
    host::Note note;
    probe.fill(sources, snapshot, note);
  }
  for (const auto& g : gpus)
    snapshot.gpus.push_back(g->gpu_snapshot());
  for (const auto& n : npus)
    snapshot.npus.push_back(n->npu_snapshot());
  auto topology = host::topology_xml(*files);

  // The tree: links first, so that what was read through them lands where they lead.
  Tree tree(out, *recorder, report);
  for (const auto& [path, target] : recorder->links)
    tree.write_link(path, target);
  json recorded_env = json::object();
  auto files_read = recorder->files;
  if (live) record_process_readings(snapshot.environment, files_read, recorded_env);
  auto account = account_of(files_read);
  for (const auto& [path, text] : files_read)
    tree.write_file(path, scrubbed(path, text, account, options));
  for (const auto& [path, names] : recorder->dirs)
    tree.make_dir(path);
  for (const auto& d : recorder->writable_dirs)
    tree.make_dir(d);
  for (const auto& [path, _] : recorder->existing_files)
    tree.touch(path);
  // Entries the probes listed but did not look into still appear in their listing.
  for (const auto& [path, names] : recorder->dirs)
    for (const auto& name : names)
      tree.touch(path + (path.size() && path.back() == '/' ? "" : "/") + name);

  // The record beside the tree: what cannot live in files.
  auto record = [&](const char* path, const std::string& text) { out.write(path, text); };
  for (const auto& name : lookups->names())
    if (!core::starts_with(name, "MAINBOARD_"))  // ours say how to replay, not what the host was
      if (auto v = core::env_set(sources.env, name)) recorded_env[name] = *v;
  record(core::paths::kRecordEnvironment, recorded_env.dump(1) + "\n");
  json commands = json::array();
  for (const auto& [argv, result] : runner->runs()) {
    commands.push_back({{"argv", argv},
                        {"exit_code", result.exit_code},
                        {"stdout", scrub_output(argv, result.out, options.hostname)},
                        {"stderr", result.err}});
    ++report.commands;
  }
  record(core::paths::kRecordCommands,
         json{{"executables", runner->executables()}, {"commands", commands}}.dump(1) + "\n");
  json space = json::object();
  for (const auto& [path, s] : recorder->spaces)
    space[path] = {{"size_bytes", s.size_bytes}, {"free_bytes", s.free_bytes}};
  record(core::paths::kRecordSpace, space.dump(1) + "\n");
  std::string writable;
  for (const auto& d : recorder->writable_dirs)
    writable += d + "\n";
  record(core::paths::kRecordWritable, writable);
  if (topology) record(core::paths::kRecordTopology, *topology);

  // The NVIDIA readings as a scenario for the fake driver libraries of the test suite.
  auto scenario = gpu_scenario(snapshot.cuda, gpus);
  if (!scenario["devices"].empty()) {
    record("/.mainboard/gpu-scenario.json", scenario.dump(1) + "\n");
    report.gpu_scenario = true;
    report.notes.push_back(
        "NVIDIA readings are in .mainboard/gpu-scenario.json: replay them with the fake driver "
        "libraries (MAINBOARD_NVML_LIBRARY, MAINBOARD_CUDA_LIBRARY and "
        "MAINBOARD_FAKE_GPU_SCENARIO; see tests/fakes/)");
  }
  return report;
}

}  // namespace mainboard
