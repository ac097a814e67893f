// `mainboard profile …`: sample programs (run, attach, dump) and read saved profiles (report,
// diff, perfetto).
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/beneath.hpp"
#include "core/interrupts.hpp"
#include "core/text.hpp"
#include "mainboard/json.hpp"
#include "mainboard/profile.hpp"
#include "traces/kineto.hpp"

namespace mainboard::cli {

namespace {

/// The summary first (it is printed whatever happens to the files), then the files. A profile
/// written over an earlier one keeps that one as FILE.old, as perf keeps perf.data.old.
void write_outputs(const Profile& p, const SampleOutputs& o) {
  std::string text = o.quiet ? std::string()
                     : o.json
                         ? json_text({{"hot_functions", p.hot_functions(20)},
                                      {"hot_stacks", p.hot_stacks(5)},
                                      {"samples", p.samples.size()},
                                      {"lost_samples", p.lost_samples},
                                      {"target_exit", p.target_exit ? nlohmann::json(*p.target_exit)
                                                                    : nlohmann::json()},
                                      {"unavailable", p.unavailable}})
                         : p.report(20);
  print(text, false, stderr);
  if (!o.output.empty()) {
    std::error_code ec;
    // Only a regular file is kept as .old: a device, a FIFO or standard output is written as it
    // is, and never moved.
    if (auto earlier = core::replaced_file(o.output))
      std::filesystem::rename(*earlier, earlier->string() + ".old", ec);
    if (write_or_fall_back(o.output, "profile", [&](const std::string& f) { p.save(f); }) &&
        core::replaced_file(o.output))
      print("mainboard: profile written to " + o.output + "\n", false, stderr);
  }
  if (!o.perfetto.empty())
    write_or_fall_back(o.perfetto, "trace", [&](const std::string& f) { p.perfetto(f); });
  o.pictures.write(p);
  if (!o.speedscope.empty())
    write_or_fall_back(o.speedscope, "speedscope file", [&](const std::string& f) {
      core::write_file_atomic(f, p.speedscope_json());
    });
}

/// The file a rank's profile goes to. `-o DIR/` (or an existing directory): DIR/rank-00003.json
/// (without a rank: DIR/HOST-PID.json); "{rank}" and "{node}" in a name are replaced; a plain
/// name under a launcher of several ranks gets ".rank-00003" before its extension, so that
/// ranks never write over each other. The directory is made (not through another's link).
std::string rank_output(const std::string& out, const std::optional<RankInfo>& rank,
                        bool* renamed) {
  namespace fs = std::filesystem;
  if (out.empty() || out == "-" || core::starts_with(out, "/dev/")) return out;
  const std::string host = this_node();
  std::string rank_text =
      rank ? fmt::format("{:05}", rank->rank) : fmt::format("{}-{}", host, ::getpid());
  std::error_code ec;
  fs::path path;
  if (out.back() == '/' || fs::is_directory(out, ec)) {
    path = fs::path(out) / (rank ? "rank-" + rank_text + ".json" : rank_text + ".json");
  } else if (out.find("{rank}") != std::string::npos || out.find("{node}") != std::string::npos) {
    std::string name = out;
    for (std::size_t at; (at = name.find("{rank}")) != std::string::npos;)
      name.replace(at, 6, rank_text);
    for (std::size_t at; (at = name.find("{node}")) != std::string::npos;)
      name.replace(at, 6, host);
    path = name;
  } else if (rank && rank->world_size.value_or(2) > 1) {
    fs::path given(out);
    path = given.parent_path() /
           (given.stem().string() + ".rank-" + rank_text + given.extension().string());
    if (renamed) *renamed = true;
  } else {
    return out;
  }
  if (path.has_parent_path()) core::TreeWriter made(path.parent_path());
  return path.string();
}

}  // namespace

// ---- pictures ----------------------------------------------------------------------------

void Pictures::declare(CLI::App& cmd) {
  cmd.add_option("--html", html,
                 "also write the report as one HTML page (no network needed): the machine, a "
                 "flame graph per thread with zoom and search, the spans' timeline with the GPU "
                 "under it, sortable tables")
      ->type_name("FILE");
  cmd.add_option("--svg", svg,
                 "also write an interactive SVG flame graph (click to zoom, search), as "
                 "flamegraph.pl draws one")
      ->type_name("FILE");
  cmd.add_option("--folded", folded, "also write folded stacks (for flamegraph.pl, inferno)")
      ->type_name("FILE");
  cmd.add_option("--pprof", pprof,
                 "also write a gzipped pprof profile (go tool pprof, Pyroscope, Parca, Cloud "
                 "Profiler): the stack samples, or a trace's operator time")
      ->type_name("FILE");
  cmd.add_flag("--function", by_function,
               "name Python frames \"function (file)\" in the folded stacks, the SVG and the "
               "page, a function one frame (by default \"function (file:line)\", as py-spy "
               "names them; the page switches between the two)");
  auto* thread = cmd.add_flag_callback(
      "--per-thread", [this] { roots = FlameRoots::thread; },
      "root the SVG flame graph and the folded stacks at each thread (name-TID) instead of the "
      "command, whose runs then add up");
  cmd.add_flag_callback(
         "--per-process", [this] { roots = FlameRoots::process; },
         "root them at each process instead: a child process's \"pid N\", a merged job's "
         "\"rank N\"")
      ->excludes(thread);
}

bool Pictures::write(const Profile& p) const {
  bool ok = true;
  if (!folded.empty())
    ok &= write_or_fall_back(folded, "folded stacks", [&](const std::string& f) {
      core::write_file_atomic(f, p.folded(roots, !by_function));
    });
  if (!svg.empty())
    ok &= write_or_fall_back(svg, "flame graph", [&](const std::string& f) {
      FlameOptions o;
      o.roots = roots;
      o.lines = !by_function;
      p.write_flamegraph_svg(f, o);
    });
  if (!html.empty())
    ok &= write_or_fall_back(html, "HTML report", [&](const std::string& f) {
      HtmlOptions o;
      o.lines = !by_function;
      p.write_html_report(f, o);
    });
  if (!pprof.empty())
    ok &=
        write_or_fall_back(pprof, "pprof profile", [&](const std::string& f) { p.write_pprof(f); });
  return ok;
}

// ---- saved profiles ----------------------------------------------------------------------

void ProfileReport::declare(CLI::App& cmd) {
  cmd.add_option("FILE", file,
                 "a profile (Profile::save's, profile run's; plain or gzipped) or a PyTorch "
                 "profiler trace (*.pt.trace.json, plain or gzipped)")
      ->required();
  cmd.add_option("--top", top, "the most rows of each list: regions, functions, stacks, idle gaps")
      ->capture_default_str()
      ->type_name("N");
  cmd.add_flag("--json", json,
               "every section as JSON: regions, timeline, hot functions and stacks, GPU, ranks");
  cmd.add_option("--sort", sort,
                 "the hot functions by samples as the leaf (self: where the time is spent) or "
                 "on the stack (total: the callers that spend it)")
      ->capture_default_str()
      ->check(one_of({"self", "total"}))
      ->type_name("self|total");
  cmd.add_option("--step", ranks.step,
                 "a merged job: the span that is one training step (default: the shallowest "
                 "span every rank repeats)")
      ->type_name("NAME");
  cmd.add_option("--collective", ranks.collectives,
                 "a merged job: a span whose time is waiting for other ranks, besides those "
                 "named like one (allreduce, barrier, wait, …); repeat for more")
      ->type_name("NAME");
  cmd.add_option("--threshold", ranks.threshold_pct,
                 "a merged job: the least lag, in percent of the others' work, that names a "
                 "straggler")
      ->capture_default_str()
      ->check(number(0, 1000))
      ->type_name("PCT");
  pictures.declare(cmd);
  cmd.footer("Example: mainboard profile report run.json --html run.html --svg run.svg");
}

std::string ProfileReport::complete(const CLI::App&, std::vector<std::string>) {
  if (auto why = check_outputs(pictures.outputs()); !why.empty()) return why;
  return check_outputs_are_not_inputs(pictures.outputs(), {file});
}

int ProfileReport::run(const Global&) {
  auto profile = Profile::load(file);
  const auto by = sort == "total" ? FunctionOrder::total : FunctionOrder::self;
  if (!json) {
    print(profile.report(top, ranks, by));
    return pictures.write(profile) ? 0 : 1;
  }
  nlohmann::json j = {{"stats", profile.bottlenecks(top)},
                      {"timeline", profile.timeline(top)},
                      {"hot_functions", profile.hot_functions(top, by)},
                      {"hot_stacks", profile.hot_stacks(top)},
                      {"samples", profile.samples.size()},
                      {"lost_samples", profile.lost_samples},
                      {"dropped_spans", profile.dropped_spans},
                      {"unavailable", profile.unavailable},
                      {"target_exit", profile.target_exit ? nlohmann::json(*profile.target_exit)
                                                          : nlohmann::json()}};
  if (!profile.activities.empty() || profile.dropped_activities) {
    j["gpu"] = profile.trace_report(top);
    j["dropped_activities"] = profile.dropped_activities;
  }
  if (!profile.counters.empty()) j["counter_bottlenecks"] = profile.counter_bottlenecks(top);
  if (!profile.processes.empty()) {
    auto o = ranks;
    o.top = top;
    j["ranks"] = profile.ranks(o);
  }
  print_json(j);
  return pictures.write(profile) ? 0 : 1;
}

void ProfileMerge::declare(CLI::App& cmd) {
  cmd.add_option("INPUT", inputs,
                 "the ranks' profiles or PyTorch profiler traces: files, or directories of them "
                 "(every *.json and *.json.gz in it)")
      ->required();
  cmd.add_option("--rank-from", rank_from,
                 "a PyTorch profiler trace that names no rank (torch without Kineto): read it "
                 "from the file's name by this regular expression, its first group (default: " +
                     std::string(traces::kRankFromName) + ")")
      ->type_name("REGEX");
  pictures.declare(cmd);
  cmd.add_option("-o,--output", output, "the merged profile")
      ->capture_default_str()
      ->type_name("FILE");
  cmd.add_option("--perfetto", perfetto, "also write a Chrome/Perfetto trace, a process per rank")
      ->type_name("FILE");
  cmd.footer(
      "Examples: mainboard profile merge profiles/ -o job.json && mainboard profile report "
      "job.json\n          mainboard profile merge log/ -o job.json --html job.html   (the "
      "*.pt.trace.json files tensorboard_trace_handler wrote)");
}

std::string ProfileMerge::complete(const CLI::App&, std::vector<std::string>) {
  auto outputs = pictures.outputs();
  outputs.insert(outputs.begin(), {{"-o", output}, {"--perfetto", perfetto}});
  if (!rank_from.empty()) try {
      traces::rank_from_name("", rank_from);
    } catch (const std::exception& e) {
      return e.what();
    }
  return check_outputs(outputs);
}

int ProfileMerge::run(const Global&) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) {
      files.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(in, ec)) {
      auto name = e.path().filename().string();
      bool json = e.path().extension() == ".json" ||
                  (name.size() > 8 && name.compare(name.size() - 8, 8, ".json.gz") == 0);
      if (json && !e.is_directory(ec) && name[0] != '.') found.push_back(e.path().string());
    }
    if (ec) {
      print(fmt::format("mainboard: error: cannot read {}: {}\n", in, ec.message()), false, stderr);
      return 1;
    }
    std::sort(found.begin(), found.end());
    if (found.empty())
      print(fmt::format("mainboard: {} holds no *.json file\n", in), false, stderr);
    files.insert(files.end(), found.begin(), found.end());
  }

  // Read side by side: each file is parsed on its own (most of the time is the JSON).
  std::vector<std::optional<Profile>> loaded(files.size());
  std::vector<std::string> errors(files.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < files.size();) {
      try {
        loaded[i] = Profile::load(files[i]);
        if (!rank_from.empty()) traces::name_rank_from_file(*loaded[i], files[i], rank_from);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  auto n =
      std::min<std::size_t>({files.size(), 8, std::max(1u, std::thread::hardware_concurrency())});
  for (std::size_t i = 1; i < n; ++i)
    pool.emplace_back(work);
  work();
  for (auto& t : pool)
    t.join();
  // An output that is one of the inputs would be written over what it was read from. An
  // earlier merge's output found in a directory is not an input (it is left out below).
  std::vector<std::string> read;
  for (std::size_t i = 0; i < files.size(); ++i)
    if (!loaded[i] || loaded[i]->processes.empty()) read.push_back(files[i]);
  auto outputs = pictures.outputs();
  outputs.insert(outputs.begin(), {{"-o", output}, {"--perfetto", perfetto}});
  if (auto why = check_outputs_are_not_inputs(outputs, read); !why.empty()) {
    print("mainboard: error: " + why + "\n", false, stderr);
    return 2;
  }
  std::vector<Profile> profiles;
  std::vector<std::string> names, unreadable;
  for (std::size_t i = 0; i < files.size(); ++i) {
    // A merged job lying among the ranks (an earlier merge's output) is not a rank.
    if (loaded[i] && !loaded[i]->processes.empty()) {
      unreadable.push_back("merge: " + files[i] + " is itself a merged job (left out)");
      continue;
    }
    if (loaded[i]) {
      profiles.push_back(std::move(*loaded[i]));
      names.push_back(files[i]);
    } else {
      unreadable.push_back("merge: " + errors[i] + " (left out)");
    }
  }
  if (profiles.empty()) {
    for (const auto& u : unreadable)
      print(fmt::format("mainboard: {}\n", u.c_str() + 7), false, stderr);
    std::fprintf(stderr, "mainboard: error: no profile to merge\n");
    return 1;
  }
  auto job = Profile::merge_ranks(std::move(profiles), names);
  job.unavailable.insert(job.unavailable.begin(), unreadable.begin(), unreadable.end());
  auto ranks = job.ranks();
  bool written =
      write_or_fall_back(output, "merged profile", [&](const std::string& f) { job.save(f); });
  bool traced =
      perfetto.empty() ||
      write_or_fall_back(perfetto, "trace", [&](const std::string& f) { job.perfetto(f); });
  traced &= pictures.write(job);
  std::string text =
      written ? fmt::format("mainboard: merged {} profile{} into {}\n", names.size(),
                            names.size() == 1 ? "" : "s", output)
              : fmt::format("mainboard: error: merged {} profile{}, but {} was not written\n",
                            names.size(), names.size() == 1 ? "" : "s", output);
  for (const auto& w : ranks.warnings)
    text += "mainboard: " + w + "\n";
  text += ranks.verdict + "\n";
  print(text, false, stderr);
  return written && traced ? 0 : 1;
}

void ProfileDiff::declare(CLI::App& cmd) {
  cmd.add_option("BASE", base, "the baseline profile")->required();
  cmd.add_option("NEW", next, "the profile to compare")->required();
  cmd.add_flag("--json", json, "as JSON");
}

int ProfileDiff::run(const Global&) {
  auto d = Profile::load(next).diff(Profile::load(base));
  if (json) {
    nlohmann::json j = d;
    print_json(j);
  } else {
    print(d.report());
  }
  return 0;
}

void ProfilePerfetto::declare(CLI::App& cmd) {
  cmd.add_option("FILE", input, "a saved profile")->required();
  cmd.add_option("-o,--output", output, "the trace file to write (open at ui.perfetto.dev)")
      ->required();
}

std::string ProfilePerfetto::complete(const CLI::App&, std::vector<std::string>) {
  if (auto why = check_outputs({{"-o", output}}); !why.empty()) return why;
  return check_outputs_are_not_inputs({{"-o", output}}, {input});
}

int ProfilePerfetto::run(const Global&) {
  auto p = Profile::load(input);
  return write_or_fall_back(output, "trace", [&](const std::string& f) { p.perfetto(f); }) ? 0 : 1;
}

// ---- sampling ----------------------------------------------------------------------------

void Sampling::declare(CLI::App& cmd) {
  cmd.add_option("-o,--output", out.output,
                 "where to save the profile (empty: do not save); DIR/ saves DIR/rank-00003.json "
                 "under a launcher (torchrun, srun, mpirun), and {rank} or {node} in a name are "
                 "replaced")
      ->capture_default_str()
      ->type_name("FILE");
  cmd.add_flag("--quiet", out.quiet, "no summary on standard error");
  cmd.add_option("--perfetto", out.perfetto, "also write a Chrome/Perfetto trace")
      ->type_name("FILE");
  out.pictures.declare(cmd);
  cmd.add_option("--speedscope", out.speedscope, "also write a speedscope file")->type_name("FILE");
  cmd.add_option("--hz", options.hz, "stack samples per second, 1 to 100000")
      ->capture_default_str()
      ->check(number(1, 100000))
      ->type_name("HZ");
  cmd.add_flag("--json", out.json, "the summary as JSON on stderr");
  cmd.add_flag_callback(
      "--user-only", [this] { options.kernel = false; },
      "do not sample time in the kernel (by default system calls and page faults show as a "
      "[kernel] frame, when kernel.perf_event_paranoid allows)");
  cmd.add_flag("--wall", options.wall,
               "sample Python threads whether they run or wait (sleep, lock, I/O), not only on a "
               "CPU");
  cmd.add_flag("--gil", options.gil,
               "sample at each tick only the Python thread holding the GIL (py-spy's --gil): "
               "time waiting for the GIL, asleep or in other threads is not in the profile");
  cmd.add_flag("--pause", options.pause,
               "stop the program for each read of its Python stacks (reads cannot tear; the "
               "program is slowed)");
  cmd.add_flag("--nonblocking", options.nonblocking,
               "never stop the program: a Python stack that changes under every read is left "
               "out (and counted) instead of read once with its thread stopped");
  cmd.add_flag_callback(
      "--no-children", [this] { options.children = false; },
      "sample only the process itself (by default also the processes it starts, and for attach "
      "those it had started already: a multiprocessing pool's workers)");
  cmd.add_flag_callback(
      "--no-python", [this] { options.python = false; },
      "keep the interpreter's own frames in CPython processes (by default they are replaced by "
      "the Python frames they run, read from the process)");
  cmd.add_option_function<std::string>(
         "--call-graph",
         [this](const std::string& v) {
           options.call_graph = v == "dwarf" ? CallGraph::dwarf : CallGraph::frame_pointers;
         },
         "dwarf (the default): copy each sample's stack and unwind it with the modules' CFI, "
         "keeping the frames of code built without frame pointers (libtorch, BLAS); fp: the "
         "kernel's walk along frame pointers (cheaper; such code is cut short)")
      ->check(one_of({"fp", "dwarf"}))
      ->type_name("fp|dwarf");
}

std::optional<RankInfo> Sampling::output_rank() const {
  return RankInfo::current();
}

std::optional<RankInfo> ProfileAttach::output_rank() const {
  return RankInfo::of_process(pid);
}

std::string Sampling::complete(const CLI::App&, std::vector<std::string>) {
  try {
    bool renamed = false;
    auto rank = output_rank();
    auto named = rank_output(out.output, rank, &renamed);
    if (renamed && rank && rank->rank == 0)
      std::fprintf(stderr, "mainboard: rank profiles go to %s and the like (one per rank)\n",
                   named.c_str());
    out.output = named;
  } catch (const Error& e) {
    return std::string("-o ") + out.output + ": " + e.what();
  }
  auto outputs = out.pictures.outputs();
  outputs.insert(
      outputs.begin(),
      {{"-o", out.output}, {"--perfetto", out.perfetto}, {"--speedscope", out.speedscope}});
  return check_outputs(outputs);
}

void ProfileRun::declare(CLI::App& cmd) {
  Sampling::declare(cmd);
  cmd.add_option("--timeout", options.timeout_s,
                 "end the command after this many seconds (the profile is kept)")
      ->check(number(0, kNoLimit))
      ->type_name("S");
  cmd.add_option("--kill-after", options.kill_after_s,
                 "when mainboard is interrupted (Ctrl-C, SIGTERM, SIGHUP), give the command "
                 "this long to end before SIGTERM, then SIGKILL (a second signal cuts it short)")
      ->capture_default_str()
      ->check(number(0, kNoLimit))
      ->type_name("S");
  cmd.add_flag("--gpu", gpu,
               "trace the command's CUDA kernels and copies (CUPTI, through CUDA injection)");
  cmd.footer("Example: mainboard profile run --html run.html -- python3 train.py --steps 100");
}

std::string ProfileRun::complete(const CLI::App& cmd, std::vector<std::string> rest) {
  command = std::move(rest);
  if (gpu) options.features = options.features | Feature::gpu_activity;
  return Sampling::complete(cmd, {});
}

int ProfileRun::run(const Global&) {
  if (command.empty()) {
    std::fprintf(
        stderr,
        "mainboard: error: profile run needs a command: mainboard profile run -- CMD ARGS\n");
    return 2;
  }
  core::InterruptHandlers interrupts(interrupt_signals());
  auto r = Sampler::run(command, options);
  write_outputs(r.profile, out);
  if (r.timed_out)
    std::fprintf(stderr, "mainboard: the command was ended after %g s\n", options.timeout_s);
  else if (r.signal)
    std::fprintf(stderr, "mainboard: the command was killed by signal %d (%s)\n", r.signal,
                 strsignal(r.signal));
  return r.exit_code;
}

void ProfileAttach::declare(CLI::App& cmd) {
  cmd.add_option("PID", pid, "the process")->required()->check(number(1, kNoLimit));
  Sampling::declare(cmd);
  cmd.add_option("--duration", options.duration_s, "sample for this many seconds")
      ->capture_default_str()
      ->check(number(0, kNoLimit, true))
      ->type_name("S");
}

int ProfileAttach::run(const Global&) {
  core::InterruptHandlers interrupts(interrupt_signals());
  write_outputs(Sampler::attach(pid, options), out);
  return 0;
}

void ProfileDump::declare(CLI::App& cmd) {
  cmd.add_option("PID", pid, "the process")->required()->check(number(1, kNoLimit));
  cmd.add_flag("--json", json, "as JSON");
  cmd.add_flag("--native", options.native,
               "in a Python process, also the native frames between the Python ones (stops each "
               "thread while it is read)");
  cmd.add_flag("--main-thread", main_only, "only the main thread");
  cmd.add_flag("--nonblocking", options.nonblocking,
               "never stop a thread: one whose Python stack changes under every read is shown "
               "without frames (by default it is read once stopped)");
  cmd.add_flag("--no-python", no_python, "native stacks only, also of a Python process");
  cmd.add_flag("--locals", options.locals,
               "also each Python frame's arguments and local variables, with a short repr of "
               "each value (read from the process's memory, never by running code in it)");
  cmd.add_flag("--subprocesses", subprocesses,
               "also every process it started (and they started), each after it");
  cmd.add_flag("--async", options.async_aware,
               "also each asyncio task's chain of awaits, innermost first, and the tasks "
               "awaiting it (CPython 3.11-3.13)");
}

std::string ProfileDump::complete(const CLI::App&, std::vector<std::string>) {
  options.all_threads = !main_only;
  options.python = !no_python;
  return "";
}

int ProfileDump::run(const Global&) {
  auto dumps = subprocesses ? Sampler::dump_tree(pid, options)
                            : std::vector<StackDump>{Sampler::dump(pid, options)};
  if (json) {
    // The process's dump; with --subprocesses, each descendant's in its "subprocesses".
    auto as_json = [&](const StackDump& d) {
      nlohmann::json j = d;
      if (!options.async_aware) j.erase("tasks");
      return j;
    };
    nlohmann::json j = as_json(dumps.front());
    if (subprocesses) {
      j["subprocesses"] = nlohmann::json::array();
      for (std::size_t i = 1; i < dumps.size(); ++i)
        j["subprocesses"].push_back(as_json(dumps[i]));
    }
    print_json(j);
  } else {
    std::string text;
    for (const auto& d : dumps)
      text += (text.empty() ? "" : "\n") + d.text();
    print(text);
  }
  return 0;
}

}  // namespace mainboard::cli
