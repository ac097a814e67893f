// `mainboard fleet`, `fleet check`, `fleet gather DIR`: many nodes at once, through Slurm (one
// task per node, each running `mainboard fleet --node`) or from recorded nodes.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/beneath.hpp"
#include "core/interrupts.hpp"
#include "core/process.hpp"
#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "mainboard/fleet.hpp"
#include "mainboard/json.hpp"
#include "mainboard/runner.hpp"

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
      print(fmt::format("mainboard: {}: {}\n", n.name, n.error), false, stderr);
  }
  std::fprintf(stderr,
               "mainboard: gathered %zu of %zu nodes into %s; read them with: mainboard fleet "
               "--from %s\n",
               done, gathered.nodes.size(), dir.c_str(), dir.c_str());
  return done == gathered.nodes.size() ? 0 : 1;
}

/// Sends SIGTERM to the tasks of the srun step named `name` (scancel --signal, which leaves the
/// step to end by itself: srun, sent SIGTERM, has the step killed at once, and no rank would
/// keep its profile). False when the step could not be found or signalled.
bool signal_step(const std::string& name) {
  const char* path = std::getenv("PATH");
  mainboard::LocalRunner runner(path ? path : "/usr/bin:/bin");
  mainboard::Command list;
  list.argv = {"squeue", "--steps", "--noheader", "--format=%i %j"};
  list.timeout = std::chrono::seconds(10);
  auto steps = runner.run(list);
  if (!steps.ok()) return false;
  for (auto line : core::split_lines(steps.out)) {
    auto fields = core::split_ws(line);
    if (fields.size() != 2 || fields[1] != name) continue;
    mainboard::Command cancel;
    cancel.argv = {"scancel", "--signal=TERM", std::string(fields[0])};
    cancel.timeout = std::chrono::seconds(10);
    return runner.run(cancel).ok();
  }
  return false;
}

/// `fleet profile`: `profile run` as every task of an srun step, each rank's profile into `dir`.
/// Exit: srun's status. Interrupted (Ctrl-C, SIGTERM, SIGHUP): the ranks are sent SIGTERM
/// through Slurm and each ends its command and keeps its profile; srun itself is sent SIGTERM
/// (the step killed) after 60 s or on a second interrupt, SIGKILL on a third.
int run_profile(std::vector<std::string> argv, const std::string& dir,
                const std::vector<std::string>& options, const std::vector<std::string>& command) {
  const char* path = std::getenv("PATH");
  auto srun = core::find_program("srun", path ? path : "/usr/bin:/bin");
  if (!srun) {
    std::fprintf(stderr,
                 "mainboard: error: fleet profile runs the ranks through Slurm's srun, "
                 "and there is none on PATH\n");
    return 127;
  }
  // Every rank runs to its end: one that fails does not end the others' step. The step's name
  // finds it again to signal its tasks.
  const std::string step = "mainboard-profile-" + std::to_string(::getpid());
  argv.insert(argv.begin() + 1, {"--kill-on-bad-exit=0", "--job-name=" + step});
  auto self = std::filesystem::read_symlink("/proc/self/exe").string();
  argv.insert(argv.end(), {"--", self, "profile", "run", "-o", dir + "/", "--quiet"});
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  core::InterruptHandlers interrupts(interrupt_signals());
  pid_t pid = -1;
  if (int rc = ::posix_spawn(&pid, srun->c_str(), nullptr, nullptr, args.data(), environ); rc != 0)
    core::throw_exec_failed("srun", rc);
  int status = 0, stage = 0;
  auto next = std::chrono::steady_clock::time_point::max();
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    auto now = std::chrono::steady_clock::now();
    int asked = detail::g_interrupts.count.load();
    if (stage < 3 && (asked > stage || (stage > 0 && now >= next))) {
      ++stage;
      if (stage == 1 && signal_step(step)) {
        next = now + std::chrono::seconds(60);
      } else if (stage <= 2) {
        stage = 2;
        ::kill(pid, SIGTERM);
        next = now + std::chrono::seconds(10);
      } else {
        ::kill(pid, SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto ended = core::exit_status(status);
  std::size_t written = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (core::starts_with(e.path().filename().string(), "rank-")) ++written;
  if (written)
    std::fprintf(stderr,
                 "mainboard: %zu rank profile%s in %s; merge them: mainboard profile merge %s -o "
                 "job.json\n",
                 written, written == 1 ? "" : "s", dir.c_str(), dir.c_str());
  else
    std::fprintf(stderr, "mainboard: no rank left a profile in %s\n", dir.c_str());
  return ended.signal ? 128 + ended.signal : ended.exit_code;
}

/// A directory every node writes into (fleet gather, fleet profile): made absolute, created
/// (refused through another's link) and checked writable; why not, or "".
std::string shared_directory(std::string& dir) {
  auto path = std::filesystem::absolute(dir);
  try {
    core::TreeWriter made(path);
  } catch (const Error& e) {
    return e.what();
  }
  if (auto why = core::why_unwritable(path / "probe"); !why.empty()) return why;
  dir = path.string();
  return "";
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
    print_json(j);
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
  auto* profile = cmd.add_subcommand(
      "profile",
      "profile run as every rank of a job through srun (-- CMD ARGS): a profile per rank in DIR, "
      "to merge with mainboard profile merge DIR");
  profile
      ->add_option("-o,--output", profile_dir, "where each rank's profile goes (rank-00003.json)")
      ->capture_default_str()
      ->type_name("DIR");
  profile->add_option("-n,--ntasks", ntasks, "how many ranks (srun --ntasks)")->type_name("N");
  profile
      ->add_option("--ntasks-per-node", ntasks_per_node, "ranks per node (srun --ntasks-per-node)")
      ->type_name("N");
  profile
      ->add_option_function<std::string>(
          "--hz",
          [this](const std::string& v) {
            profile_options.insert(profile_options.end(), {"--hz", v});
          },
          "stack samples per second on each rank (profile run --hz)")
      ->check(number(1, 100000))
      ->type_name("HZ");
  profile
      ->add_option_function<std::string>(
          "--call-graph",
          [this](const std::string& v) {
            profile_options.insert(profile_options.end(), {"--call-graph", v});
          },
          "fp or dwarf (profile run --call-graph)")
      ->check(one_of({"fp", "dwarf"}))
      ->type_name("fp|dwarf");
  profile->add_flag_callback(
      "--gpu", [this] { profile_options.push_back("--gpu"); },
      "trace each rank's CUDA kernels and copies (profile run --gpu)");
  profile->footer(
      "Example: mainboard fleet profile --nodes 3 --ntasks 3 -o profiles -- python3 train.py\n"
      "Then: mainboard profile merge profiles -o job.json && mainboard profile report job.json");
  profile->fallthrough();
  cmd.add_option("--gather-into", gather_into, "one node's side of fleet gather")->group("");
  cmd.add_flag("--gather-force", gather_force, "one node's side of gather --force")->group("");
}

std::string Fleet::complete(const CLI::App& cmd, std::vector<std::string> rest) {
  if (cmd.got_subcommand("check")) mode = Mode::check;
  if (cmd.got_subcommand("gather")) mode = Mode::gather;
  if (cmd.got_subcommand("profile")) mode = Mode::profile;
  // Through Slurm, one task per node; anything after -- goes to srun (fleet profile: it is the
  // command each rank runs).
  srun = {"srun"};
  if (nodes) srun.insert(srun.end(), {"--nodes", std::to_string(nodes)});
  if (!partition.empty()) srun.insert(srun.end(), {"--partition", partition});
  if (!nodelist.empty()) srun.insert(srun.end(), {"--nodelist", nodelist});
  if (mode == Mode::profile) {
    if (!from.empty()) return "fleet profile runs on live nodes: no --from";
    if (rest.empty()) return "fleet profile needs a command: mainboard fleet profile -- CMD ARGS";
    command = std::move(rest);
    if (ntasks) srun.insert(srun.end(), {"--ntasks", std::to_string(ntasks)});
    if (ntasks_per_node)
      srun.insert(srun.end(), {"--ntasks-per-node", std::to_string(ntasks_per_node)});
    return shared_directory(profile_dir);
  }
  srun.insert(srun.end(), rest.begin(), rest.end());
  if (mode != Mode::gather || node) return "";
  if (!from.empty()) return "fleet gather records live nodes: no --from";
  return shared_directory(gather_dir);
}

/// Exit status: 0 when every node answered, 1 when one did not.
int Fleet::run(const Global& g) {
  if (node) return run_node(g, gather_into, gather_force);
  if (mode == Mode::gather) return run_gather(gather_dir, gather_force, srun, timeout_s);
  if (mode == Mode::profile) return run_profile(srun, profile_dir, profile_options, command);
  auto fleet = from.empty() ? mainboard::Fleet::from_srun(srun, timeout_s, {})
                            : mainboard::Fleet::from_directory(from);
  if (mode == Mode::check) return run_check(fleet, json, strict);
  if (json) {
    nlohmann::json j = fleet;
    print_json(j);
  } else {
    print(fleet.text());
  }
  bool all = std::all_of(fleet.nodes.begin(), fleet.nodes.end(),
                         [](const FleetNode& n) { return n.snapshot.has_value(); });
  return all ? 0 : 1;
}

}  // namespace mainboard::cli
