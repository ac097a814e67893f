// `mainboard fleet`, `fleet check`, `fleet gather DIR`: many nodes at once, through Slurm (one
// task per node, each running `mainboard fleet --node`) or from recorded nodes.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/beneath.hpp"
#include "mainboard/error.hpp"
#include "mainboard/fleet.hpp"
#include "mainboard/json.hpp"

namespace mainboard::cli {

namespace {

/// One node's side: its name (Slurm's, else the host's) at once, then its snapshot.
int run_node(const Global& g, const std::string& gather_into, bool force) {
  const char* slurm = std::getenv("SLURMD_NODENAME");
  Machine machine(machine_options(g));
  std::string name = slurm && *slurm ? slurm : machine.hostname();
  print(nlohmann::json{{"node", name}}.dump() + "\n");
  std::fflush(stdout);
  if (!gather_into.empty()) {
    // `fleet gather`: this node recorded under its own name, as `mainboard gather` records one.
    GatherOptions o;
    o.hostname = name;
    o.force = force;
    o.sysroot = g.sysroot;
    gather_host(std::filesystem::path(gather_into) / name, o);
  }
  auto answer = mainboard::Fleet::node_answer(name, machine.snapshot());
  print(answer.substr(answer.find('\n') + 1));
  return 0;
}

/// `fleet gather DIR`: `gather` on every node into DIR/NODE. Exit 0 when every node recorded
/// its tree, 1 when one did not. `dir` is absolute and writable (checked by complete()).
int run_gather(const std::filesystem::path& dir, bool force, std::vector<std::string> srun,
               double timeout_s) {
  std::vector<std::string> node{"--gather-into", dir.string()};
  if (force) node.push_back("--gather-force");
  auto gathered = mainboard::Fleet::from_srun(std::move(srun), timeout_s, node);
  std::size_t done = 0;
  for (const auto& n : gathered.nodes) {
    if (n.snapshot)
      ++done;
    else
      std::fprintf(stderr, "mainboard: %s: %s\n", n.name.c_str(), n.error.c_str());
  }
  std::fprintf(stderr,
               "mainboard: gathered %zu of %zu nodes into %s; read them with: mainboard fleet "
               "--from %s\n",
               done, gathered.nodes.size(), dir.c_str(), dir.c_str());
  return done == gathered.nodes.size() ? 0 : 1;
}

/// `fleet check`: the nodes that are not ready, and why; exit 0 only when all are.
int run_check(const mainboard::Fleet& fleet, bool json, bool strict) {
  auto all = fleet.readiness(strict);
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [node, r] : all) {
      nlohmann::json one = r;
      one["node"] = node;
      one["ready"] = r.ready();
      j.push_back(one);
    }
    print(j.dump(2) + "\n");
  } else {
    print(fleet.readiness_text(strict));
  }
  bool every =
      std::all_of(all.begin(), all.end(), [](const auto& r) { return r.second.ready(); }) &&
      all.size() == fleet.nodes.size();
  return every ? 0 : 1;
}

}  // namespace

void Fleet::declare(CLI::App& cmd) {
  cmd.add_option("--from", from,
                 "recorded nodes instead of Slurm: a directory per node (mainboard gather) or "
                 "NAME.json")
      ->type_name("DIR");
  cmd.add_flag("--json", json, "the fleet document (every node's snapshot) as JSON");
  cmd.add_option("--nodes", nodes, "outside an allocation: how many nodes (srun -N)")
      ->type_name("N");
  cmd.add_option("--partition", partition, "the Slurm partition (srun -p)")->type_name("P");
  cmd.add_option("--nodelist", nodelist, "these nodes (srun -w)")->type_name("LIST");
  cmd.add_option("--timeout", timeout_s,
                 "a node that has not answered by then is listed as timed out")
      ->capture_default_str()
      ->check(number(0, kNoLimit, true))
      ->type_name("S");
  cmd.add_flag("--node", node, "one node's side (what srun runs on each node)")->group("");
  auto* check = cmd.add_subcommand(
      "check", "mainboard check on every node: the nodes that are not ready, and why");
  check->add_flag("--strict", strict, "warnings count as not ready too");
  check->fallthrough();
  auto* gather = cmd.add_subcommand(
      "gather", "mainboard gather on every node, into DIR/NODE (a directory every node can write)");
  gather->add_option("DIR", gather_dir, "where each node's tree goes")->required();
  gather->add_flag("--force", gather_force, "write into trees that are not empty");
  gather->fallthrough();
  cmd.add_option("--gather-into", gather_into, "one node's side of fleet gather")->group("");
  cmd.add_flag("--gather-force", gather_force, "one node's side of gather --force")->group("");
}

std::string Fleet::complete(const CLI::App& cmd, std::vector<std::string> rest) {
  if (cmd.got_subcommand("check")) mode = Mode::check;
  if (cmd.got_subcommand("gather")) mode = Mode::gather;
  // Through Slurm, one task per node; anything after -- goes to srun.
  srun = {"srun"};
  if (nodes) srun.insert(srun.end(), {"--nodes", std::to_string(nodes)});
  if (!partition.empty()) srun.insert(srun.end(), {"--partition", partition});
  if (!nodelist.empty()) srun.insert(srun.end(), {"--nodelist", nodelist});
  srun.insert(srun.end(), rest.begin(), rest.end());
  if (mode != Mode::gather || node) return "";
  if (!from.empty()) return "fleet gather records live nodes: no --from";
  auto dir = std::filesystem::absolute(gather_dir);
  try {
    core::TreeWriter shared(dir);  // created; refused through another's link
  } catch (const Error& e) {
    return e.what();
  }
  if (auto why = core::why_unwritable(dir / "probe"); !why.empty()) return why;
  gather_dir = dir.string();
  return "";
}

/// Exit status: 0 when every node answered, 1 when one did not.
int Fleet::run(const Global& g) {
  if (node) return run_node(g, gather_into, gather_force);
  if (mode == Mode::gather) return run_gather(gather_dir, gather_force, srun, timeout_s);
  auto fleet = from.empty() ? mainboard::Fleet::from_srun(srun, timeout_s, {})
                            : mainboard::Fleet::from_directory(from);
  if (mode == Mode::check) return run_check(fleet, json, strict);
  if (json) {
    nlohmann::json j = fleet;
    print(j.dump(2) + "\n");
  } else {
    print(fleet.text());
  }
  bool all = std::all_of(fleet.nodes.begin(), fleet.nodes.end(),
                         [](const FleetNode& n) { return n.snapshot.has_value(); });
  return all ? 0 : 1;
}

}  // namespace mainboard::cli
