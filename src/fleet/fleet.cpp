// The fleet document: node snapshots merged, grouped by the traits a job depends on, and the
// nodes that differ from the rest found trait by trait.
#include "mainboard/fleet.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/input_file.hpp"
#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/runner.hpp"
#include "model/json_fields.hpp"
#include "view/format.hpp"

namespace mainboard {

std::vector<std::pair<std::string, std::string>> Fleet::traits(const MachineSnapshot& s) {
  std::vector<std::pair<std::string, std::string>> t;
  const auto& cpu = s.cpu.info;
  t.emplace_back("CPU", cpu.label.empty() ? "unknown" : cpu.label);
  t.emplace_back("cores", cpu.packages > 1
                              ? fmt::format("{} × {} cores, {} threads", cpu.packages,
                                            cpu.cores / cpu.packages, cpu.threads)
                              : fmt::format("{} cores, {} threads", cpu.cores, cpu.threads));
  // Three significant figures: sizes within about 1 % read the same.
  t.emplace_back("memory", s.memory ? view::bytes(s.memory->total_bytes) : "unknown");
  std::map<std::string, int> models;
  for (const auto& g : s.gpus)
    ++models[g.info.label];
  std::vector<std::string> gpus;
  for (const auto& [label, n] : models)
    gpus.push_back(fmt::format("{} × {}", n, label));
  t.emplace_back("GPUs", gpus.empty() ? "none" : view::join(gpus, ", "));
  if (!s.gpus.empty() || !s.cuda.driver_version.empty()) {
    t.emplace_back("driver", s.cuda.driver_version.empty() ? "unknown" : s.cuda.driver_version);
    t.emplace_back("CUDA",
                   s.cuda.cuda_driver_version.empty() ? "unknown" : s.cuda.cuda_driver_version);
  }
  t.emplace_back("cgroup cap", s.cgroup_memory && s.cgroup_memory->limit_bytes
                                   ? view::bytes(*s.cgroup_memory->limit_bytes)
                                   : std::string("none"));
  if (s.toolchain) {
    std::vector<std::string> tools;
    for (const char* name : {"gcc", "clang", "nvcc", "python", "cmake"})
      if (const auto* tool = s.toolchain->find(name); tool && tool->version)
        tools.push_back(std::string(name) + " " + *tool->version);
    t.emplace_back("tools", tools.empty() ? "none" : view::join(tools, ", "));
  }
  if (s.os) t.emplace_back("kernel", s.os->kernel.empty() ? "unknown" : s.os->kernel);
  return t;
}

std::vector<NodeGroup> Fleet::groups() const {
  std::vector<NodeGroup> out;
  for (const auto& n : nodes) {
    if (!n.snapshot) continue;
    auto t = traits(*n.snapshot);
    auto it =
        std::find_if(out.begin(), out.end(), [&](const NodeGroup& g) { return g.traits == t; });
    if (it == out.end())
      out.push_back({std::move(t), {n.name}});
    else
      it->nodes.push_back(n.name);
  }
  std::stable_sort(out.begin(), out.end(), [](const NodeGroup& a, const NodeGroup& b) {
    return a.nodes.size() > b.nodes.size();
  });
  return out;
}

std::vector<Drift> Fleet::differences() const {
  // Trait by trait, in the order the traits come: the most common value, then who differs.
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> values;
  for (const auto& n : nodes) {
    if (!n.snapshot) continue;
    for (const auto& [trait, value] : traits(*n.snapshot)) {
      if (!values.count(trait)) order.push_back(trait);
      values[trait][value].push_back(n.name);
    }
  }
  std::vector<Drift> out;
  for (const auto& trait : order) {
    const auto& by_value = values[trait];
    if (by_value.size() < 2) continue;
    auto common = std::max_element(by_value.begin(), by_value.end(), [](auto& a, auto& b) {
      return a.second.size() < b.second.size();
    });
    for (const auto& [value, names] : by_value) {
      if (value == common->first) continue;
      for (const auto& name : names)
        out.push_back({name, trait, value, common->first, common->second.size()});
    }
  }
  return out;
}

Fleet Fleet::from_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(dir.string() + ": not a directory of recorded nodes");
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    entries.push_back(e.path());
  if (ec) throw Error(dir.string() + ": " + ec.message());
  std::sort(entries.begin(), entries.end());
  Fleet fleet;
  for (const auto& path : entries) {
    FleetNode node;
    if (std::filesystem::is_directory(path, ec)) {
      node.name = path.filename().string();
      try {
        Machine::Options o;
        o.sysroot = path;
        node.snapshot = Machine(o).snapshot();
        node.snapshot->hostname = node.name;
      } catch (const std::exception& e) {
        node.error = e.what();
      }
    } else if (path.extension() == ".json") {
      node.name = path.stem().string();
      try {
        // A node's snapshot is tens of kB (a few hundred with eight GPUs): 64 MiB is no node's.
        auto text = core::read_input(path, {64u << 20, "a node's snapshot"});
        if (auto what = core::describe_bytes(std::string_view(text).substr(0, 4096)); !what.empty())
          throw Error("not a snapshot: " + what);
        node.snapshot = nlohmann::json::parse(text).get<MachineSnapshot>();
      } catch (const std::exception& e) {
        node.error = "cannot read " + path.filename().string() + ": " + e.what();
      }
    } else {
      continue;
    }
    fleet.nodes.push_back(std::move(node));
  }
  if (fleet.nodes.empty())
    throw Error(dir.string() + ": no recorded node (a directory per node, or NAME.json)");
  return fleet;
}

namespace {
/// A node's error without the "mainboard: error: " its command put in front.
std::string without_prefix(std::string line) {
  for (const char* p : {"mainboard: error: ", "mainboard: "})
    if (line.rfind(p, 0) == 0) return line.substr(std::strlen(p));
  return line;
}
}  // namespace

std::string Fleet::node_answer(const std::string& node, const MachineSnapshot& snapshot) {
  return nlohmann::json{{"node", node}}.dump() + "\n" +
         nlohmann::json{{"snapshot", snapshot}}.dump() + "\n";
}

Fleet Fleet::from_tasks(std::string_view out, std::string_view err,
                        std::optional<double> timed_out_after_s) {
  // Task K's lines, with the "K: " that srun --label puts in front.
  auto by_task = [](std::string_view text) {
    std::map<long, std::vector<std::string>> lines;
    std::size_t start = 0;
    while (start < text.size()) {
      auto end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      auto line = text.substr(start, end - start);
      start = end + 1;
      auto colon = line.find(": ");
      if (colon == std::string_view::npos || colon == 0 || colon > 9) continue;
      long task = 0;
      bool digits = true;
      for (char c : line.substr(0, colon)) {
        if (c == ' ') continue;
        if (c < '0' || c > '9')
          digits = false;
        else
          task = task * 10 + (c - '0');
      }
      if (digits) lines[task].emplace_back(line.substr(colon + 2));
    }
    return lines;
  };
  auto outs = by_task(out), errs = by_task(err);
  Fleet fleet;
  for (const auto& [task, lines] : outs) {
    FleetNode node;
    // srun cuts long lines into labelled pieces: a task's pieces joined again are its JSON
    // values one after another (none holds a newline of its own).
    std::string joined;
    for (const auto& line : lines)
      joined += line;
    std::istringstream in(joined);
    try {
      while ((in >> std::ws) && in.peek() != std::char_traits<char>::eof()) {
        nlohmann::json j;
        in >> j;
        if (!j.is_object()) continue;
        if (j.contains("node") && j["node"].is_string()) node.name = j["node"].get<std::string>();
        if (j.contains("snapshot")) node.snapshot = j["snapshot"].get<MachineSnapshot>();
      }
    } catch (const std::exception& e) {
      // A snapshot cut short (the task was stopped) or damaged: what came before it stands.
      if (!node.snapshot && !timed_out_after_s)
        node.error = std::string("its answer cannot be read: ") + e.what();
    }
    if (node.name.empty()) node.name = "task " + std::to_string(task);
    if (!node.snapshot && node.error.empty()) {
      if (timed_out_after_s)
        node.error = fmt::format("timed out after {:g} s", *timed_out_after_s);
      else if (auto e = errs.find(task); e != errs.end() && !e->second.empty())
        node.error = without_prefix(e->second.front());  // the error itself; hints follow it
      else
        node.error = "no snapshot";
    }
    fleet.nodes.push_back(std::move(node));
  }
  // Tasks that never started their command say so on standard error only.
  for (const auto& [task, lines] : errs)
    if (!outs.count(task) && !lines.empty())
      fleet.nodes.push_back(
          {"task " + std::to_string(task), std::nullopt, without_prefix(lines.front())});
  std::sort(fleet.nodes.begin(), fleet.nodes.end(),
            [](const FleetNode& a, const FleetNode& b) { return a.name < b.name; });
  return fleet;
}

Fleet Fleet::from_srun(std::vector<std::string> srun_argv, double timeout_s,
                       const std::vector<std::string>& node_options) {
  if (srun_argv.empty()) throw Error("fleet: no srun command");
  // One task per node, each line labelled with its task, a failing node never ending the rest.
  srun_argv.insert(srun_argv.begin() + 1,
                   {"--label", "--ntasks-per-node=1", "--kill-on-bad-exit=0"});
  // This very program on every node (a shared installation, as Slurm clusters have).
  auto self = std::filesystem::read_symlink("/proc/self/exe").string();
  srun_argv.insert(srun_argv.end(), {"--", self, "fleet", "--node"});
  srun_argv.insert(srun_argv.end(), node_options.begin(), node_options.end());
  Command c;
  c.argv = std::move(srun_argv);
  c.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  // srun killed outright leaves the job it allocated running (with InactiveLimit=0, for good):
  // the nodes stay held. Sent SIGTERM, it cancels its step and gives the allocation back.
  c.stop_grace = std::chrono::seconds(10);
  c.max_output_bytes = 1ull << 30;
  const char* path = std::getenv("PATH");
  auto r = LocalRunner(path ? path : "/usr/bin:/bin").run(c);
  if (!r.error.empty()) throw Error("fleet: " + r.error);
  auto fleet =
      from_tasks(r.out, r.err, r.timed_out ? std::optional<double>(timeout_s) : std::nullopt);
  if (fleet.nodes.empty() && r.timed_out)
    throw Error(fmt::format("fleet: no node answered within {:g} s", timeout_s));
  if (fleet.nodes.empty())
    throw Error("fleet: srun gave no answer" +
                (r.err.empty() ? std::string() : ": " + std::string(r.err.substr(0, 2000))));
  return fleet;
}

std::vector<std::pair<std::string, Readiness>> Fleet::readiness(bool strict) const {
  std::vector<std::pair<std::string, Readiness>> out;
  for (const auto& n : nodes)
    if (n.snapshot) out.emplace_back(n.name, check_readiness(*n.snapshot, strict));
  std::stable_partition(out.begin(), out.end(), [](const auto& r) { return !r.second.ready(); });
  return out;
}

template <class V>
void fields(V& v, FleetNode& m) {
  v("name", m.name);
  v("snapshot", m.snapshot);
  v("error", m.error);
}
MAINBOARD_DEFINE_JSON(FleetNode)

template <class V>
void fields(V& v, Fleet& m) {
  v("schema_version", m.schema_version);
  v("nodes", m.nodes);
}
MAINBOARD_DEFINE_JSON(Fleet)

}  // namespace mainboard
