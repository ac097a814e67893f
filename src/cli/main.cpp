// The mainboard command: a thin layer that parses arguments, calls the library and formats.
#include <fmt/format.h>

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/beneath.hpp"
#include "core/interrupts.hpp"
#include "core/log.hpp"
#include "core/text.hpp"
#include "mainboard/busy.hpp"
#include "mainboard/check.hpp"
#include "mainboard/error.hpp"
#include "mainboard/fleet.hpp"
#include "mainboard/gather.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/meter.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/profiler.hpp"
#include "mainboard/sampler.hpp"
#include "mainboard/version.hpp"
#include "mainboard/view.hpp"
#include "serve/server.hpp"
#include "view/gpus.hpp"
#include "view/summary.hpp"

namespace {

using mainboard::Machine;

/// Help in words: an option's value as its name alone (FILE, S, HZ), its default in the
/// description; none of the parser's own notation (types, ranges, maps of values).
class Help : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0) return "";  // a flag
    std::string type = opt->get_type_name();
    if (auto colon = type.find(':'); colon != std::string::npos) type.resize(colon);
    return type.empty() ? "" : " " + type;
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string d = opt->get_description();
    if (!opt->get_default_str().empty()) d += " (default: " + opt->get_default_str() + ")";
    return d;
  }
};

/// A number from `low` to `high` (either bound may be left open with ±infinity; `above` makes
/// the low bound exclusive), said in words when it is not.
CLI::Validator number(double low, double high, bool above = false) {
  auto show = [](double v) { return fmt::format("{:g}", v); };
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size()) return "'" + text + "' is not a number";
        if (above && !(v > low)) return text + " is not above " + show(low);
        if (!above && v < low) return text + " is below " + show(low);
        if (v > high) return text + " is above " + show(high);
        return "";
      },
      "", "number");
}
constexpr double kNoLimit = std::numeric_limits<double>::infinity();

/// One of `names`, said in words when it is not.
CLI::Validator one_of(std::vector<std::string> names) {
  return CLI::Validator(
      [names](std::string& text) -> std::string {
        if (std::find(names.begin(), names.end(), text) != names.end()) return "";
        std::string all;
        for (const auto& n : names)
          all += (all.empty() ? "" : ", ") + n;
        return "'" + text + "' is not one of " + all;
      },
      "", "one of");
}

struct Global {
  int width = 0;  // 0: the terminal's
  std::string sysroot;
  std::string color = "auto";
  bool verbose = false;
  bool no_cache = false;
};

Machine::Options machine_options(const Global& g) {
  Machine::Options o;
  o.sysroot = g.sysroot;
  o.toolchain_cache = !g.no_cache;
  return o;
}

void print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
}

void emit_json(const nlohmann::json& j, const std::string& output) {
  std::string text = j.dump(2) + "\n";
  if (output.empty())
    print(text);
  else
    mainboard::core::write_file_atomic(output, text);
}

int run_snapshot(const Global& g, bool json, bool toolchain, const std::string& output) {
  Machine machine(machine_options(g));
  mainboard::SnapshotOptions opts;
  opts.toolchain = toolchain;
  auto snap = machine.snapshot(opts);
  if (json || !output.empty()) {
    emit_json(snap, output);
  } else {
    mainboard::view::Style style{mainboard::view::want_color(g.color, 1)};
    print(mainboard::view::render_summary(snap, style));
  }
  return 0;
}

int run_view(const Global& g) {
  Machine machine(machine_options(g));
  mainboard::ViewOptions options;
  options.color = mainboard::view::want_color(g.color, 1);
  options.width = g.width > 0 ? g.width : mainboard::terminal_width(1);
  mainboard::MachineView::of(machine).print(options);
  return 0;
}

int run_toolchain(const Global& g, bool json, bool cmake_only) {
  Machine machine(machine_options(g));
  const auto& tc = machine.toolchain();
  const auto& cfg = machine.compilers();
  if (cmake_only) {
    // Quoted for a shell: pasted after `cmake`, or `eval cmake -S . "$(mainboard toolchain
    // --cmake)"` (a ';' in a list of CUDA architectures would end the command unquoted).
    print(mainboard::core::shell_quote(cfg.cmake_args()) + "\n");
    if (auto note = machine.cuda_stack().toolkit_newer_than_driver(); !note.empty())
      std::fprintf(stderr, "mainboard: warning: %s\n", note.c_str());  // stdout stays arguments
    return 0;
  }
  if (json) {
    nlohmann::json j = {{"toolchain", tc}, {"compilers", cfg}};
    print(j.dump(2) + "\n");
    return 0;
  }
  mainboard::view::Style style{mainboard::view::want_color(g.color, 1)};
  print(mainboard::view::render_toolchain(tc, cfg, style,
                                          machine.cuda_stack().toolkit_newer_than_driver()));
  return 0;
}

int run_gpus(const Global& g, bool json) {
  Machine machine(machine_options(g));
  std::vector<mainboard::GpuSnapshot> gpus;
  for (const auto& gpu : machine.gpus())
    gpus.push_back(gpu->gpu_snapshot());
  std::vector<mainboard::NpuSnapshot> npus;
  for (const auto& npu : machine.npus())
    npus.push_back(npu->npu_snapshot());
  const auto& cuda = machine.cuda_stack();
  if (json) {
    std::vector<mainboard::Diagnostic> diagnostics;
    for (const auto& d : machine.identity_diagnostics())
      if (d.probe.rfind("gpu:", 0) == 0 || d.probe.rfind("npu:", 0) == 0 || d.probe == "cuda")
        diagnostics.push_back(d);
    nlohmann::json j = {
        {"gpus", gpus}, {"npus", npus}, {"cuda", cuda}, {"diagnostics", diagnostics}};
    print(j.dump(2) + "\n");
    return 0;
  }
  mainboard::view::Style style{mainboard::view::want_color(g.color, 1)};
  print(mainboard::view::render_gpus(gpus, npus, cuda, style));
  return 0;
}

/// One node's side of `fleet`: its name (Slurm's, else the host's) at once, then its snapshot.
int run_fleet_node(const Global& g, const std::string& gather_into, bool force) {
  const char* slurm = std::getenv("SLURMD_NODENAME");
  Machine machine(machine_options(g));
  std::string name = slurm && *slurm ? slurm : machine.hostname();
  print(nlohmann::json{{"node", name}}.dump() + "\n");
  std::fflush(stdout);
  if (!gather_into.empty()) {
    // `fleet gather`: this node recorded under its own name, as `mainboard gather` records one.
    mainboard::GatherOptions o;
    o.hostname = name;
    o.force = force;
    o.sysroot = g.sysroot;
    mainboard::gather_host(std::filesystem::path(gather_into) / name, o);
  }
  auto answer = mainboard::Fleet::node_answer(name, machine.snapshot());
  print(answer.substr(answer.find('\n') + 1));
  return 0;
}

/// `fleet gather DIR`: `gather` on every node into DIR/NODE. Exit 0 when every node recorded
/// its tree, 1 when one did not. `dir` is absolute and writable (checked by the caller).
int run_fleet_gather(const std::filesystem::path& dir, bool force, std::vector<std::string> srun,
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

/// Exit status: 0 when every node answered, 1 when one did not.
int run_fleet(const Global& g, const std::string& from, bool json, std::vector<std::string> srun,
              double timeout_s, std::optional<bool> check_strict,
              const std::vector<std::string>& node_options = {}) {
  auto fleet = from.empty() ? mainboard::Fleet::from_srun(std::move(srun), timeout_s, node_options)
                            : mainboard::Fleet::from_directory(from);
  if (check_strict) {
    // `fleet check`: the nodes that are not ready, and why; exit 0 only when all are.
    auto all = fleet.readiness(*check_strict);
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
      print(fleet.readiness_text(*check_strict));
    }
    bool every =
        std::all_of(all.begin(), all.end(), [](const auto& r) { return r.second.ready(); }) &&
        all.size() == fleet.nodes.size();
    return every ? 0 : 1;
  }
  if (json) {
    nlohmann::json j = fleet;
    print(j.dump(2) + "\n");
  } else {
    static_cast<void>(g);
    print(fleet.text());
  }
  bool all = std::all_of(fleet.nodes.begin(), fleet.nodes.end(),
                         [](const mainboard::FleetNode& n) { return n.snapshot.has_value(); });
  return all ? 0 : 1;
}

/// Exit status: 0 ready, 1 not ready (docs/check.md).
int run_check(const Global& g, bool json, bool strict) {
  Machine machine(machine_options(g));
  auto r = mainboard::check_readiness(machine.snapshot({.toolchain = false}), strict);
  if (json) {
    nlohmann::json j = r;
    j["ready"] = r.ready();
    print(j.dump(2) + "\n");
  } else {
    print(r.text(mainboard::view::want_color(g.color, 1)));
  }
  return r.ready() ? 0 : 1;
}

/// Serves until SIGINT, SIGTERM or SIGHUP; exit 0 then, 1 when the address cannot be bound.
int run_serve(const Global& g, const mainboard::serve::ServerOptions& options) {
  // Blocked before the server's threads start, so they inherit the mask and this thread alone
  // takes the signal, in sigwait.
  sigset_t stop;
  sigemptyset(&stop);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    sigaddset(&stop, sig);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  // Every connection is a descriptor: the soft limit (often 1024) would refuse clients long
  // before the server's own limit, so it is raised to the hard one, as Go's servers do.
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, 1u << 20);
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  auto machine_opts = machine_options(g);
  machine_opts.listen_for_xids = true;
  Machine machine(machine_opts);
  machine.gpus();  // found now, so that XIDs are counted from the start, not the first scrape
  mainboard::serve::MetricsServer server(machine, options);
  std::string host = server.host();
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  std::fprintf(stderr, "mainboard serve: http://%s:%d/metrics (Ctrl-C to stop)\n", host.c_str(),
               server.port());
  std::fflush(stderr);
  int sig = 0;
  sigwait(&stop, &sig);
  std::fprintf(stderr, "mainboard serve: stopping (%s)\n", sigabbrev_np(sig));
  return 0;
}

/// Exit status: 0 idle, 1 busy (or still busy at the timeout), 2 no such GPU.
/// Without --index, a host without GPUs is idle (exit 0); a GPU asked for by index must exist.
int run_busy(const Global& g, std::size_t index, bool index_given,
             const mainboard::BusyThresholds& thresholds, std::optional<double> wait_timeout_s,
             double interval_s) {
  Machine machine(machine_options(g));
  std::size_t count = machine.gpus().size();
  if ((count > 0 || index_given) && index >= count) {
    std::fprintf(stderr, "mainboard: error: no GPU %zu (this host has %s)\n", index,
                 count == 0 ? "none" : std::to_string(count).c_str());
    return 2;
  }
  if (wait_timeout_s)
    return mainboard::wait_for_idle(machine, index, *wait_timeout_s, interval_s, thresholds) ? 0
                                                                                             : 1;
  return mainboard::gpu_busy(machine, index, thresholds) ? 1 : 0;
}

/// Ctrl-C, SIGTERM (kill, scancel, a time limit) and SIGHUP (a closed terminal) during meter,
/// profile run and attach: the run ends the command step by step and keeps what it measured.
std::vector<int> interrupt_signals() {
  return {SIGINT, SIGTERM, SIGHUP};
}

/// The output files of a run, checked before it starts: a run is never lost to a typo in a path.
/// Empty when all can be written, else the usage error.
std::string check_outputs(const std::vector<std::pair<const char*, std::string>>& outputs) {
  for (const auto& [option, path] : outputs)
    if (auto why = mainboard::core::why_unwritable(path); !why.empty())
      return std::string(option) + " " + path + ": " + why;
  return "";
}

/// Writes `write(path)`; when that fails after all (a full disk, a directory removed meanwhile),
/// says so and writes to core::fallback_path instead. False when nothing could be written.
bool write_or_fall_back(const std::string& path, const char* what,
                        const std::function<void(const std::string&)>& write) {
  try {
    write(path);
    return true;
  } catch (const std::exception& e) {
    auto fallback = mainboard::core::fallback_path(path).string();
    try {
      write(fallback);
      std::fprintf(stderr, "mainboard: error: %s; the %s is in %s instead\n", e.what(), what,
                   fallback.c_str());
      return true;
    } catch (const std::exception& again) {
      std::fprintf(stderr, "mainboard: error: %s; and %s\n", e.what(), again.what());
      return false;
    }
  }
}

/// The command's own output stays on stdout and stderr untouched; the report goes to stderr
/// after it (as time(1) does), or as JSON to stderr or a file. Exit status: the command's.
int run_meter(const Global& g, const std::vector<std::string>& command, bool json,
              const std::string& output, int interval_ms, double kill_after_s) {
  if (command.empty()) {
    std::fprintf(stderr, "mainboard: error: meter needs a command: mainboard meter -- CMD ARGS…\n");
    return 2;
  }
  Machine machine(machine_options(g));
  mainboard::MeterOptions opts;
  opts.interval = std::chrono::milliseconds(interval_ms);
  opts.kill_after_s = kill_after_s;
  mainboard::core::InterruptHandlers interrupts(interrupt_signals());
  auto m = mainboard::measure_command(machine, command, opts);
  nlohmann::json j = m;
  auto write_file = [&] {
    if (!output.empty())
      write_or_fall_back(output, "report", [&](const std::string& f) {
        mainboard::core::write_file_atomic(f, j.dump(2) + "\n");
      });
  };
  if (json) {
    std::fprintf(stderr, "%s\n", j.dump(2).c_str());
    write_file();
    return m.exit_code;
  }
  using mainboard::view::bytes;
  mainboard::view::Style style{mainboard::view::want_color(g.color, 2)};
  std::string r = style.bold("mainboard meter: " + mainboard::core::shell_quote(command)) + "\n";
  auto row = [&](const char* label, const std::string& text) {
    r += "  " + style.label(fmt::format("{:<13}", label)) + text + "\n";
  };
  row("exit", m.signal ? fmt::format("{} (signal {})", m.exit_code, *m.signal)
                       : std::to_string(m.exit_code));
  row("wall", fmt::format("{:.2f} s", m.wall_s));
  double cpu = m.user_s + m.system_s;
  row("cpu", fmt::format("user {:.2f} s, system {:.2f} s ({:.0f} % of one core)", m.user_s,
                         m.system_s, m.wall_s > 0 ? 100.0 * cpu / m.wall_s : 0.0));
  if (m.peak_pss_bytes)
    row("peak memory",
        fmt::format("{} proportional (PSS) for the whole tree; {} summed RSS (at most {} "
                    "process{}; largest single process {})",
                    bytes(m.peak_pss_bytes), bytes(m.peak_tree_rss_bytes), m.peak_processes,
                    m.peak_processes == 1 ? "" : "es", bytes(m.max_process_rss_bytes)));
  else
    row("peak memory",
        fmt::format("{} for the whole tree (summed RSS; at most {} process{}; largest single "
                    "process {})",
                    bytes(m.peak_rss_bytes), m.peak_processes, m.peak_processes == 1 ? "" : "es",
                    bytes(m.max_process_rss_bytes)));
  row("page faults", fmt::format("{} major (from disk), {} minor", m.major_faults, m.minor_faults));
  row("switches", fmt::format("{} voluntary (waits), {} involuntary (preempted)",
                              m.voluntary_switches, m.involuntary_switches));
  row("file system",
      fmt::format("{} read, {} written", bytes(m.fs_inputs * 512), bytes(m.fs_outputs * 512)));
  if (m.peak_gpu_bytes) {
    std::string by;
    for (const auto& [uuid, peak] : m.peak_gpu_bytes_by_gpu)
      by += (by.empty() ? "" : ", ") + uuid + " " + bytes(peak);
    row("peak GPU", bytes(*m.peak_gpu_bytes) + (by.empty() ? "" : " (" + by + ")"));
  } else {
    row("peak GPU", style.dim("no GPU to read"));
  }
  row("samples", fmt::format("{} every {:.0f} ms", m.samples, m.interval_ms));
  std::fwrite(r.data(), 1, r.size(), stderr);
  write_file();
  return m.exit_code;
}

int run_gather(const std::string& dir, const mainboard::GatherOptions& options) {
  auto report = mainboard::gather_host(dir, options);
  std::fprintf(stderr,
               "mainboard: gathered %zu files (and %zu empty ones the probes only looked for) and "
               "%zu command outputs into %s, with the recording in %s/.mainboard\n",
               report.files, report.empty_files, report.commands, dir.c_str(), dir.c_str());
  for (const auto& note : report.notes)
    std::fprintf(stderr, "mainboard: %s\n", note.c_str());
  std::fprintf(stderr, "mainboard: replay with: MAINBOARD_SYSROOT=%s mainboard snapshot\n",
               dir.c_str());
  return 0;
}

int run_profile_report(const std::string& file, std::size_t top, bool json) {
  auto profile = mainboard::Profile::load(file);
  if (json) {
    nlohmann::json j = {
        {"stats", profile.bottlenecks(top)},           {"timeline", profile.timeline(top)},
        {"hot_functions", profile.hot_functions(top)}, {"hot_stacks", profile.hot_stacks(top)},
        {"samples", profile.samples.size()},           {"lost_samples", profile.lost_samples},
        {"dropped_spans", profile.dropped_spans},      {"unavailable", profile.unavailable}};
    if (!profile.activities.empty() || profile.dropped_activities) {
      j["gpu"] = profile.trace_report(top);
      j["dropped_activities"] = profile.dropped_activities;
    }
    if (!profile.counters.empty()) j["counter_bottlenecks"] = profile.counter_bottlenecks(top);
    print(j.dump(2) + "\n");
    return 0;
  }
  print(profile.report(top));
  return 0;
}

int run_profile_diff(const std::string& base, const std::string& next, bool json) {
  auto d = mainboard::Profile::load(next).diff(mainboard::Profile::load(base));
  if (json) {
    nlohmann::json j = d;
    print(j.dump(2) + "\n");
  } else {
    print(d.report());
  }
  return 0;
}

struct SampleOutputs {
  std::string output = "mainboard-profile.json", perfetto, folded, speedscope;
  bool per_process = false;  // folded stacks rooted at each thread, not the command
  bool json = false;
};

std::string check_outputs(const SampleOutputs& o) {
  return check_outputs({{"-o", o.output},
                        {"--perfetto", o.perfetto},
                        {"--folded", o.folded},
                        {"--speedscope", o.speedscope}});
}

/// The summary first (it is printed whatever happens to the files), then the files. A profile
/// written over an earlier one keeps that one as FILE.old, as perf keeps perf.data.old.
void write_outputs(const mainboard::Profile& p, const SampleOutputs& o) {
  std::string text = o.json ? nlohmann::json{{"hot_functions", p.hot_functions(20)},
                                             {"hot_stacks", p.hot_stacks(5)},
                                             {"samples", p.samples.size()},
                                             {"lost_samples", p.lost_samples},
                                             {"unavailable", p.unavailable}}
                                      .dump(2) +
                                  "\n"
                            : p.report(20);
  std::fwrite(text.data(), 1, text.size(), stderr);
  if (!o.output.empty()) {
    std::error_code ec;
    // Only a regular file is kept as .old: a device, a FIFO or standard output is written as it
    // is, and never moved.
    if (auto earlier = mainboard::core::replaced_file(o.output))
      std::filesystem::rename(*earlier, earlier->string() + ".old", ec);
    if (write_or_fall_back(o.output, "profile", [&](const std::string& f) { p.save(f); }) &&
        mainboard::core::replaced_file(o.output))
      std::fprintf(stderr, "mainboard: profile written to %s\n", o.output.c_str());
  }
  if (!o.perfetto.empty())
    write_or_fall_back(o.perfetto, "trace", [&](const std::string& f) { p.perfetto(f); });
  if (!o.folded.empty())
    write_or_fall_back(o.folded, "folded stacks", [&](const std::string& f) {
      mainboard::core::write_file_atomic(f, p.folded(o.per_process));
    });
  if (!o.speedscope.empty())
    write_or_fall_back(o.speedscope, "speedscope file", [&](const std::string& f) {
      mainboard::core::write_file_atomic(f, p.speedscope_json());
    });
}

int run_profile_run(const std::vector<std::string>& command, mainboard::SampleOptions options,
                    const SampleOutputs& out) {
  if (command.empty()) {
    std::fprintf(
        stderr,
        "mainboard: error: profile run needs a command: mainboard profile run -- CMD ARGS\n");
    return 2;
  }
  mainboard::core::InterruptHandlers interrupts(interrupt_signals());
  auto r = mainboard::Sampler::run(command, options);
  write_outputs(r.profile, out);
  if (r.timed_out)
    std::fprintf(stderr, "mainboard: the command was ended after %g s\n", options.timeout_s);
  else if (r.signal)
    std::fprintf(stderr, "mainboard: the command was killed by signal %d (%s)\n", r.signal,
                 strsignal(r.signal));
  return r.exit_code;
}

int run_profile_attach(std::int64_t pid, const mainboard::SampleOptions& options,
                       const SampleOutputs& out) {
  mainboard::core::InterruptHandlers interrupts(interrupt_signals());
  auto p = mainboard::Sampler::attach(pid, options);
  write_outputs(p, out);
  return 0;
}

int run_profile_dump(std::int64_t pid, const mainboard::DumpOptions& options, bool json) {
  auto d = mainboard::Sampler::dump(pid, options);
  if (json) {
    nlohmann::json j = d;
    if (!options.async_aware) j.erase("tasks");
    print(j.dump(2) + "\n");
  } else {
    print(d.text());
  }
  return 0;
}

/// "mainboard profile run": the command the user was giving, for "run '… --help'".
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  const CLI::App* at = &app;
  for (int depth = 0; depth < 8; ++depth) {
    auto used = at->get_subcommands();
    if (used.empty()) break;
    at = used.front();
    path += " " + at->get_name();
  }
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mainboard: what machine am I on, and what is it doing?"};
  app.name("mainboard");
  app.set_version_flag("--version", std::string("mainboard ") + mainboard::kVersion);
  app.require_subcommand(0, 1);
  // Set before the commands are added: they inherit both. Global options are understood after
  // a command's name too (fallthrough).
  app.formatter(std::make_shared<Help>());
  app.fallthrough();
  Global g;
  app.add_option("--sysroot", g.sysroot,
                 "read the system from this directory instead of / (also MAINBOARD_SYSROOT)")
      ->type_name("DIR");
  app.add_option("--color", g.color, "colour the output: auto, always or never")
      ->check(one_of({"auto", "always", "never"}))
      ->type_name("WHEN");
  app.add_flag("-v,--verbose", g.verbose, "log what each probe does on stderr");
  app.add_option("--width", g.width, "columns for the schematic (default: the terminal's, or 80)")
      ->check(number(20, 400))
      ->type_name("N");
  app.add_flag("--no-cache", g.no_cache, "probe tool versions afresh, ignoring the on-disk cache");

  // A command that takes a command of its own (meter, profile run) keeps what it does not know
  // for that command, so global options cannot fall through to the top: it takes them itself.
  auto add_globals = [&g](CLI::App* cmd) {
    cmd->fallthrough(false);
    cmd->add_option("--sysroot", g.sysroot)->group("");
    cmd->add_option("--color", g.color)->check(one_of({"auto", "always", "never"}))->group("");
    cmd->add_flag("-v,--verbose", g.verbose)->group("");
    cmd->add_flag("--no-cache", g.no_cache)->group("");
  };

  auto* snapshot = app.add_subcommand("snapshot", "probe the whole machine; a summary, or --json");
  bool snap_json = false, snap_no_tools = false;
  std::string snap_output;
  snapshot->add_flag("--json", snap_json, "the full snapshot as JSON on stdout");
  snapshot->add_flag("--no-toolchain", snap_no_tools, "skip the compiler and build tool probe");
  snapshot->add_option("-o,--output", snap_output, "write the JSON snapshot to this file")
      ->type_name("FILE");

  auto* toolchain = app.add_subcommand("toolchain", "compilers and build tools on PATH");
  bool tc_json = false, tc_cmake = false;
  toolchain->add_flag("--json", tc_json, "as JSON");
  toolchain->add_flag("--cmake", tc_cmake, "only the -D arguments for CMake, on one line");

  auto* gpus = app.add_subcommand("gpus", "GPUs and NPUs: identity and a telemetry reading each");
  bool gpus_json = false;
  gpus->add_flag("--json", gpus_json,
                 "as JSON, with the CUDA stack and the providers' diagnostics");

  auto* check = app.add_subcommand(
      "check", "is this node ready for a benchmark or a job: exit 0 ready, 1 not ready");
  bool check_json = false, check_strict = false;
  check->add_flag("--json", check_json, "the findings as JSON");
  check->add_flag("--strict", check_strict, "warnings count as not ready too");

  auto* fleet = app.add_subcommand(
      "fleet", "many nodes at once: grouped by what a job depends on, differences called out");
  std::string fleet_from, fleet_partition, fleet_nodelist;
  bool fleet_json = false, fleet_node = false;
  std::size_t fleet_nodes = 0;
  double fleet_timeout = 60;
  fleet
      ->add_option("--from", fleet_from,
                   "recorded nodes instead of Slurm: a directory per node (mainboard gather) or "
                   "NAME.json")
      ->type_name("DIR");
  fleet->add_flag("--json", fleet_json, "the fleet document (every node's snapshot) as JSON");
  fleet->add_option("--nodes", fleet_nodes, "outside an allocation: how many nodes (srun -N)")
      ->type_name("N");
  fleet->add_option("--partition", fleet_partition, "the Slurm partition (srun -p)")
      ->type_name("P");
  fleet->add_option("--nodelist", fleet_nodelist, "these nodes (srun -w)")->type_name("LIST");
  fleet
      ->add_option("--timeout", fleet_timeout,
                   "a node that has not answered by then is listed as timed out")
      ->capture_default_str()
      ->check(number(0, kNoLimit, true))
      ->type_name("S");
  fleet->add_flag("--node", fleet_node, "one node's side (what srun runs on each node)")->group("");
  auto* fleet_check = fleet->add_subcommand(
      "check", "mainboard check on every node: the nodes that are not ready, and why");
  bool fleet_strict = false;
  fleet_check->add_flag("--strict", fleet_strict, "warnings count as not ready too");
  fleet_check->fallthrough();
  auto* fleet_gather = fleet->add_subcommand(
      "gather", "mainboard gather on every node, into DIR/NODE (a directory every node can write)");
  std::string fleet_gather_dir, fleet_gather_into;
  bool fleet_gather_force = false;
  fleet_gather->add_option("DIR", fleet_gather_dir, "where each node's tree goes")->required();
  fleet_gather->add_flag("--force", fleet_gather_force, "write into trees that are not empty");
  fleet_gather->fallthrough();
  fleet->add_option("--gather-into", fleet_gather_into, "one node's side of fleet gather")
      ->group("");
  fleet->add_flag("--gather-force", fleet_gather_force, "one node's side of gather --force")
      ->group("");

  auto* serve = app.add_subcommand(
      "serve", "metrics for Prometheus: /metrics (host, cgroup, every GPU and NPU) and /healthz");
  mainboard::serve::ServerOptions serve_options;
  serve
      ->add_option("--listen", serve_options.listen,
                   "ADDR:PORT to listen on (0.0.0.0:PORT for every interface; port 0 picks one)")
      ->capture_default_str()
      ->type_name("ADDRESS");
  serve
      ->add_option("--min-interval", serve_options.min_interval_s,
                   "scrapes closer together than this share one reading")
      ->capture_default_str()
      ->check(number(0, 3600))
      ->type_name("S");
  double serve_client_timeout = serve_options.request_timeout_ms / 1000.0;
  serve
      ->add_option("--client-timeout", serve_client_timeout,
                   "a connection that sends no complete request for this long is closed "
                   "(whole seconds)")
      ->capture_default_str()
      ->check(number(1, 3600))
      ->type_name("S");

  std::size_t busy_index = 0;
  mainboard::BusyThresholds thresholds;
  double wait_timeout = 30.0, wait_interval = 0.5;
  auto* busy = app.add_subcommand(
      "busy", "exit 0 when GPU N is idle, 1 when it is busy, 2 when there is no such GPU");
  auto* wait_idle = app.add_subcommand(
      "wait-idle", "wait until GPU N is idle: exit 0 once idle, 1 at the timeout, 2 no such GPU");
  for (auto* cmd : {busy, wait_idle}) {
    cmd->add_option("--index", busy_index, "which GPU (CUDA ordinal)")
        ->capture_default_str()
        ->type_name("N");
    cmd->add_option("--util", thresholds.util_pct, "busy above this compute utilization (%)")
        ->capture_default_str()
        ->check(number(0, 100))
        ->type_name("PCT");
    cmd->add_option("--memory", thresholds.memory_pct, "busy above this memory use (%)")
        ->capture_default_str()
        ->check(number(0, 100))
        ->type_name("PCT");
  }
  wait_idle->add_option("--timeout", wait_timeout, "give up after this many seconds")
      ->capture_default_str()
      ->check(number(0, kNoLimit))
      ->type_name("S");
  wait_idle->add_option("--interval", wait_interval, "poll every this many seconds")
      ->capture_default_str()
      ->check(number(0, kNoLimit, true))
      ->type_name("S");

  auto* meter = app.add_subcommand(
      "meter",
      "run a command; report wall and CPU time, peak memory of its process tree and peak "
      "GPU memory (on stderr), and exit with its status");
  bool meter_json = false;
  std::string meter_output;
  int meter_interval = 50;
  meter->add_flag("--json", meter_json, "the report as JSON on stderr");
  meter->add_option("-o,--output", meter_output, "also write the JSON report to this file")
      ->type_name("FILE");
  meter->add_option("--interval", meter_interval, "sample the process tree every MS milliseconds")
      ->capture_default_str()
      ->check(number(1, 60000))
      ->type_name("MS");
  double meter_kill_after = 10;
  meter
      ->add_option("--kill-after", meter_kill_after,
                   "when mainboard is interrupted (Ctrl-C, SIGTERM, SIGHUP), give the command "
                   "this long to end before SIGTERM, then SIGKILL (a second signal cuts it short)")
      ->capture_default_str()
      ->check(number(0, kNoLimit))
      ->type_name("S");
  meter->prefix_command();  // everything from the first non-option on is the command
  add_globals(meter);
  meter->footer("Example: mainboard meter --interval 20 -- python3 train.py --epochs 1");

  auto* gather = app.add_subcommand(
      "gather",
      "copy what mainboard reads on this host into DIR (scrubbed of serial numbers and "
      "hostnames) so that --sysroot DIR reproduces it elsewhere");
  std::string gather_dir;
  mainboard::GatherOptions gather_options;
  gather->add_option("DIR", gather_dir, "where to write the tree")->required();
  gather->add_option("--hostname", gather_options.hostname, "the hostname the tree reports")
      ->capture_default_str();
  gather->add_flag("--force", gather_options.force, "write into a directory that is not empty");

  auto* profile =
      app.add_subcommand("profile", "sample programs; read, compare and export profiles");
  profile->require_subcommand(1);
  auto* report = profile->add_subcommand("report", "the report of a saved profile");
  std::string report_file;
  std::size_t report_top = 20;
  bool report_json = false;
  report->add_option("FILE", report_file, "a profile saved by Profile::save")->required();
  report
      ->add_option("--top", report_top,
                   "the most rows of each list: regions, functions, stacks, idle gaps")
      ->capture_default_str()
      ->type_name("N");
  report->add_flag("--json", report_json,
                   "every section as JSON: regions, timeline, hot functions and stacks, GPU");
  auto* diff = profile->add_subcommand("diff", "change of every region from BASE to NEW");
  std::string diff_base, diff_new;
  bool diff_json = false;
  diff->add_option("BASE", diff_base, "the baseline profile")->required();
  diff->add_option("NEW", diff_new, "the profile to compare")->required();
  diff->add_flag("--json", diff_json, "as JSON");
  auto* perfetto =
      profile->add_subcommand("perfetto", "export a profile as a Chrome/Perfetto trace");
  std::string perfetto_in, perfetto_out;
  perfetto->add_option("FILE", perfetto_in, "a saved profile")->required();
  perfetto
      ->add_option("-o,--output", perfetto_out, "the trace file to write (open at ui.perfetto.dev)")
      ->required();

  auto add_sampling = [](CLI::App* cmd, mainboard::SampleOptions& o, SampleOutputs& out) {
    cmd->add_option("-o,--output", out.output, "where to save the profile (empty: do not save)")
        ->capture_default_str()
        ->type_name("FILE");
    cmd->add_option("--perfetto", out.perfetto, "also write a Chrome/Perfetto trace")
        ->type_name("FILE");
    cmd->add_flag("--per-process", out.per_process,
                  "root the folded stacks at each thread (name-TID) instead of the command, "
                  "whose runs then add up");
    cmd->add_option("--folded", out.folded, "also write folded stacks (for flamegraph.pl)")
        ->type_name("FILE");
    cmd->add_option("--speedscope", out.speedscope, "also write a speedscope file")
        ->type_name("FILE");
    cmd->add_option("--hz", o.hz, "stack samples per second, 1 to 100000")
        ->capture_default_str()
        ->check(number(1, 100000))
        ->type_name("HZ");
    cmd->add_flag("--json", out.json, "the summary as JSON on stderr");
    cmd->add_flag_callback(
        "--user-only", [&o] { o.kernel = false; },
        "do not sample time in the kernel (by default system calls and page faults show as a "
        "[kernel] frame, when kernel.perf_event_paranoid allows)");
    cmd->add_flag("--wall", o.wall,
                  "sample Python threads whether they run or wait (sleep, lock, I/O), not only "
                  "on a CPU");
    cmd->add_flag("--pause", o.pause,
                  "stop the program for each read of its Python stacks (reads cannot tear; "
                  "the program is slowed)");
    cmd->add_flag_callback(
        "--no-python", [&o] { o.python = false; },
        "keep the interpreter's own frames in CPython processes (by default they are "
        "replaced by the Python frames they run, read from the process)");
    cmd->add_option_function<std::string>(
           "--call-graph",
           [&o](const std::string& v) {
             o.call_graph =
                 v == "dwarf" ? mainboard::CallGraph::dwarf : mainboard::CallGraph::frame_pointers;
           },
           "fp: walk frame pointers (cheap, the default); dwarf: copy each sample's stack and "
           "unwind it with CFI (code built without frame pointers)")
        ->check(one_of({"fp", "dwarf"}))
        ->type_name("fp|dwarf");
  };
  auto* prun = profile->add_subcommand(
      "run",
      "run a command, sample its stacks (and collect its spans and, with --gpu, its GPU activity); "
      "exit with its status");
  mainboard::SampleOptions run_options;
  SampleOutputs run_out;
  add_sampling(prun, run_options, run_out);
  prun->add_option("--timeout", run_options.timeout_s,
                   "end the command after this many seconds (the profile is kept)")
      ->check(number(0, kNoLimit))
      ->type_name("S");
  prun->add_option("--kill-after", run_options.kill_after_s,
                   "when mainboard is interrupted (Ctrl-C, SIGTERM, SIGHUP), give the command "
                   "this long to end before SIGTERM, then SIGKILL (a second signal cuts it short)")
      ->capture_default_str()
      ->check(number(0, kNoLimit))
      ->type_name("S");
  bool run_gpu = false, run_no_children = false;
  prun->add_flag("--gpu", run_gpu,
                 "trace the command's CUDA kernels and copies (CUPTI, through CUDA injection)");
  prun->add_flag("--no-children", run_no_children, "sample only the command's own process");
  prun->prefix_command();
  add_globals(prun);
  prun->footer(
      "Example: mainboard profile run --hz 999 --speedscope run.speedscope.json -- ./train --steps "
      "100");

  auto* pattach = profile->add_subcommand("attach", "sample the stacks of a running process");
  mainboard::SampleOptions attach_options;
  SampleOutputs attach_out;
  std::int64_t attach_pid = 0;
  pattach->add_option("PID", attach_pid, "the process")->required()->check(number(1, kNoLimit));
  add_sampling(pattach, attach_options, attach_out);
  pattach->add_option("--duration", attach_options.duration_s, "sample for this many seconds")
      ->capture_default_str()
      ->check(number(0, kNoLimit, true))
      ->type_name("S");

  auto* pdump = profile->add_subcommand(
      "dump",
      "print one stack of every thread of a running process (its Python stacks when it "
      "runs CPython 3.9-3.13, like py-spy dump)");
  std::int64_t dump_pid = 0;
  bool dump_json = false;
  mainboard::DumpOptions dump_options;
  bool dump_main_only = false, dump_no_python = false;
  pdump->add_option("PID", dump_pid, "the process")->required()->check(number(1, kNoLimit));
  pdump->add_flag("--json", dump_json, "as JSON");
  pdump->add_flag("--native", dump_options.native,
                  "in a Python process, also the native frames between the Python ones (stops "
                  "each thread while it is read)");
  pdump->add_flag("--main-thread", dump_main_only, "only the main thread");
  pdump->add_flag("--no-python", dump_no_python, "native stacks only, also of a Python process");
  pdump->add_flag("--async", dump_options.async_aware,
                  "also each asyncio task's chain of awaits, innermost first, and the tasks "
                  "awaiting it (CPython 3.11-3.13)");

  // "mainboard meter [options] -- CMD ARGS": everything after the first "--" is the command,
  // untouched by our option parser (it may have options of its own). Without "--", the first
  // word that is not an option starts it (prefix_command).
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> after_dashes;
  if (auto dashes = std::find(args.begin(), args.end(), "--"); dashes != args.end()) {
    after_dashes.assign(dashes + 1, args.end());
    args.erase(dashes, args.end());
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order

  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // "The following argument(s) was/were not expected: A B": in words of our own.
    std::string text = e.what();
    auto colon = text.find(": ");
    std::string what = colon == std::string::npos ? text : text.substr(colon + 2);
    bool option = !what.empty() && what[0] == '-';
    std::fprintf(stderr, "mainboard: error: %s %s\n(run '%s --help' for usage)\n",
                 option ? "unknown option" : "unexpected argument", what.c_str(),
                 command_path(app).c_str());
    return 2;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "mainboard: error: %s\n(run '%s --help' for usage)\n", e.what(),
                 command_path(app).c_str());
    return 2;
  }
  auto usage_error = [&](const std::string& message) {
    std::fprintf(stderr, "mainboard: error: %s\n(run '%s --help' for usage)\n", message.c_str(),
                 command_path(app).c_str());
    return 2;
  };
  // meter and profile run take the command from the first word that is not one of their
  // options: one that looks like an option is a mistake (a typo, an option of another command).
  for (auto* cmd : {meter, prun})
    if (*cmd && !cmd->remaining().empty() && cmd->remaining()[0].size() > 1 &&
        cmd->remaining()[0][0] == '-')
      return usage_error("unknown option " + cmd->remaining()[0]);
  {
    std::string root = g.sysroot;
    const char* from = "--sysroot";
    if (root.empty())
      if (const char* env = std::getenv("MAINBOARD_SYSROOT"); env && *env) {
        root = env;
        from = "MAINBOARD_SYSROOT";
      }
    std::error_code ec;
    if (!root.empty() && !std::filesystem::is_directory(root, ec))
      return usage_error(
          std::string(from) + " " + root +
          (std::filesystem::exists(root, ec) ? ": not a directory" : ": no such directory"));
  }
  if (g.verbose) mainboard::core::set_log_level(spdlog::level::debug);

  try {
    if (*toolchain) return run_toolchain(g, tc_json, tc_cmake);
    if (*gpus) return run_gpus(g, gpus_json);
    if (*gather) {
      gather_options.sysroot = g.sysroot;  // --sysroot: gather a recorded host again
      return run_gather(gather_dir, gather_options);
    }
    if (*report) return run_profile_report(report_file, report_top, report_json);
    if (*diff) return run_profile_diff(diff_base, diff_new, diff_json);
    if (*perfetto) {
      if (auto why = check_outputs({{"-o", perfetto_out}}); !why.empty()) return usage_error(why);
      mainboard::Profile::load(perfetto_in).perfetto(perfetto_out);
      return 0;
    }
    if (*snapshot)
      if (auto why = check_outputs({{"-o", snap_output}}); !why.empty()) return usage_error(why);
    if (*meter)
      if (auto why = check_outputs({{"-o", meter_output}}); !why.empty()) return usage_error(why);
    if (*prun)
      if (auto why = check_outputs(run_out); !why.empty()) return usage_error(why);
    if (*pattach)
      if (auto why = check_outputs(attach_out); !why.empty()) return usage_error(why);
    if (*prun) {
      auto command = prun->remaining();
      command.insert(command.end(), after_dashes.begin(), after_dashes.end());
      if (run_gpu) run_options.features = run_options.features | mainboard::Feature::gpu_activity;
      run_options.children = !run_no_children;
      return run_profile_run(command, run_options, run_out);
    }
    if (*pattach) return run_profile_attach(attach_pid, attach_options, attach_out);
    if (*pdump) {
      dump_options.all_threads = !dump_main_only;
      dump_options.python = !dump_no_python;
      return run_profile_dump(dump_pid, dump_options, dump_json);
    }
    if (*meter) {
      auto command = meter->remaining();
      command.insert(command.end(), after_dashes.begin(), after_dashes.end());
      return run_meter(g, command, meter_json, meter_output, meter_interval, meter_kill_after);
    }
    if (*fleet) {
      if (fleet_node) return run_fleet_node(g, fleet_gather_into, fleet_gather_force);
      // Through Slurm, one task per node; anything after -- goes to srun.
      std::vector<std::string> srun{"srun"};
      if (fleet_nodes) srun.insert(srun.end(), {"--nodes", std::to_string(fleet_nodes)});
      if (!fleet_partition.empty()) srun.insert(srun.end(), {"--partition", fleet_partition});
      if (!fleet_nodelist.empty()) srun.insert(srun.end(), {"--nodelist", fleet_nodelist});
      srun.insert(srun.end(), after_dashes.begin(), after_dashes.end());
      if (*fleet_gather) {
        if (!fleet_from.empty()) return usage_error("fleet gather records live nodes: no --from");
        auto dir = std::filesystem::absolute(fleet_gather_dir);
        try {
          mainboard::core::TreeWriter shared(dir);  // created; refused through another's link
        } catch (const mainboard::Error& e) {
          return usage_error(e.what());
        }
        if (auto why = mainboard::core::why_unwritable(dir / "probe"); !why.empty())
          return usage_error(why);
        return run_fleet_gather(dir, fleet_gather_force, std::move(srun), fleet_timeout);
      }
      return run_fleet(g, fleet_from, fleet_json, std::move(srun), fleet_timeout,
                       *fleet_check ? std::optional<bool>(fleet_strict) : std::nullopt);
    }
    if (!after_dashes.empty()) {
      std::fprintf(stderr,
                   "mainboard: error: only meter, profile run and fleet take arguments after --\n");
      return 2;
    }
    if (*check) return run_check(g, check_json, check_strict);
    if (*serve) {
      try {
        mainboard::serve::listening_port(serve_options.listen);
      } catch (const mainboard::Error& e) {
        return usage_error(e.what());
      }
      serve_options.request_timeout_ms = static_cast<int>(serve_client_timeout * 1000);
      return run_serve(g, serve_options);
    }
    if (*busy)
      return run_busy(g, busy_index, busy->count("--index") > 0, thresholds, std::nullopt,
                      wait_interval);
    if (*wait_idle)
      return run_busy(g, busy_index, wait_idle->count("--index") > 0, thresholds, wait_timeout,
                      wait_interval);
    if (*snapshot) return run_snapshot(g, snap_json, !snap_no_tools, snap_output);
    return run_view(g);
  } catch (const mainboard::Interrupted& e) {
    std::fprintf(stderr, "mainboard: %s\n", e.what());
    return 128 + e.signal();  // as a shell reports a command a signal ended
  } catch (const mainboard::CommandError& e) {
    std::fprintf(stderr, "mainboard: error: %s\n", e.what());
    return e.exit_code();  // 127 or 126, as a shell
  } catch (const mainboard::Error& e) {
    std::fprintf(stderr, "mainboard: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mainboard: error: %s\n", e.what());
    return 1;
  }
}
