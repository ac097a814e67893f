// The commands of `mainboard`. Each is a class whose members are its options: declare() binds
// them to the parser, complete() checks what parsing gave (a usage error, or "" when the
// command can run), run() does the work and gives the exit status. Parsing gives the chosen
// command as a value (cli.hpp's parse), which the tests check without starting a process.
//
// A new command: its class here, its file (src/cli/<command>.cpp: declare, complete, run) and
// its row in the table of cli.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "mainboard/busy.hpp"
#include "mainboard/gather.hpp"
#include "mainboard/sampler.hpp"
#include "serve/server.hpp"

namespace mainboard::cli {

class Command {
 public:
  virtual ~Command() = default;
  /// Declares the command's options on `cmd`, bound to this object's members.
  virtual void declare(CLI::App& cmd) = 0;
  /// After parsing: `rest` is what a command that runs another takes (the words after its
  /// options, then those after "--"). A usage error, or "" when the command can run.
  virtual std::string complete(const CLI::App& cmd, std::vector<std::string> rest) {
    static_cast<void>(cmd);
    static_cast<void>(rest);
    return "";
  }
  /// Runs the command: its exit status. Errors are thrown (cli.hpp's run maps them).
  virtual int run(const Global& g) = 0;
};

/// No command: the schematic of the machine.
struct View : Command {
  void declare(CLI::App&) override {}
  int run(const Global& g) override;
};

struct Snapshot : Command {
  bool json = false, no_toolchain = false;
  std::string output;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

struct Toolchain : Command {
  bool json = false, cmake = false;
  void declare(CLI::App& cmd) override;
  int run(const Global& g) override;
};

struct Gpus : Command {
  bool json = false;
  void declare(CLI::App& cmd) override;
  int run(const Global& g) override;
};

/// `topo`: the PCIe path between devices, as `nvidia-smi topo -m` prints it.
struct Topo : Command {
  bool json = false;
  void declare(CLI::App& cmd) override;
  int run(const Global& g) override;
};

struct Check : Command {
  bool json = false, strict = false;
  void declare(CLI::App& cmd) override;
  int run(const Global& g) override;
};

/// `fleet`, `fleet check` and `fleet gather DIR` (one command: the same nodes, three views).
struct Fleet : Command {
  enum class Mode { show, check, gather, profile } mode = Mode::show;
  std::string from, partition, nodelist;
  bool json = false, strict = false;
  std::size_t nodes = 0;
  double timeout_s = 60;
  std::string gather_dir;  // fleet gather DIR, made absolute by complete()
  bool gather_force = false;
  bool node = false;              // one node's side (what srun runs on each node)
  std::string gather_into;        // one node's side of fleet gather
  std::vector<std::string> srun;  // the srun command line, from the options and after "--"
  // fleet profile: the rank profiles' directory, the tasks, and the command after "--"
  std::string profile_dir = "mainboard-profiles";
  std::size_t ntasks = 0, ntasks_per_node = 0;
  std::vector<std::string> profile_options;  // passed to each rank's `profile run`
  std::vector<std::string> command;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

struct Serve : Command {
  serve::ServerOptions options;
  double client_timeout_s = options.request_timeout_ms / 1000.0;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

/// `top`: the machine live, full-screen on a terminal, a frame per interval elsewhere, or JSON
/// Lines with --json.
struct Top : Command {
  double interval_s = 1.0;
  bool once = false, json = false, all = false;
  std::uint64_t count = 0;  // 0: until quit
  std::string sort;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

/// `busy` (is GPU N busy now) and, with a timeout, `wait-idle` (until it is not).
struct Busy : Command {
  explicit Busy(bool waits = false) : wait(waits) {}
  bool wait;
  std::size_t index = 0;
  bool index_given = false;
  BusyThresholds thresholds;
  double timeout_s = 30.0, interval_s = 0.5;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

struct Meter : Command {
  bool json = false;
  std::string output;
  int interval_ms = 50;
  double kill_after_s = 10;
  std::vector<std::string> command;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

struct Gather : Command {
  std::string dir;
  GatherOptions options;
  void declare(CLI::App& cmd) override;
  int run(const Global& g) override;
};

/// The pictures of a profile a command can also write: an SVG flame graph, the HTML report, and
/// folded stacks, with the roots of the first and the last.
struct Pictures {
  std::string svg, html, folded, pprof;
  FlameRoots roots = FlameRoots::command;
  bool by_function = false;  // --function: Python frames by function, not by line
  void declare(CLI::App& cmd);
  /// Writes each one asked for (falling back to $TMPDIR, as the profile does); false when one
  /// could not be written anywhere.
  bool write(const Profile& p) const;
  std::vector<std::pair<const char*, std::string>> outputs() const {
    return {{"--svg", svg}, {"--html", html}, {"--folded", folded}, {"--pprof", pprof}};
  }
};

struct ProfileReport : Command {
  std::string file;
  std::size_t top = 20;
  bool json = false;
  std::string sort = "self";  // the hot functions by self or total time
  RankOptions ranks;          // how a merged job's ranks are read
  Pictures pictures;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

struct ProfileDiff : Command {
  std::string base, next;
  bool json = false;
  void declare(CLI::App& cmd) override;
  int run(const Global& g) override;
};

/// `profile merge`: the ranks' profiles of a distributed job into one.
struct ProfileMerge : Command {
  std::vector<std::string> inputs;
  std::string output = "mainboard-job.json", perfetto;
  std::string rank_from;  // --rank-from: the pattern a trace's rank is read from its file name by
  Pictures pictures;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

struct ProfilePerfetto : Command {
  std::string input, output;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

/// The files a sampled run writes, and how its summary is printed.
struct SampleOutputs {
  std::string output = "mainboard-profile.json", perfetto, speedscope;
  Pictures pictures;  // --svg, --html, --folded
  bool json = false;
  bool quiet = false;  // no summary on stderr
};

/// What `profile run` and `profile attach` share: sampling options and output files.
struct Sampling : Command {
  SampleOptions options;
  SampleOutputs out;
  void declare(CLI::App& cmd) override;  // the shared options
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  /// The rank whose profile this is (it names the output under a launcher).
  virtual std::optional<RankInfo> output_rank() const;
};

struct ProfileRun : Sampling {
  bool gpu = false;
  std::vector<std::string> command;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

struct ProfileAttach : Sampling {
  std::int64_t pid = 0;
  void declare(CLI::App& cmd) override;
  std::optional<RankInfo> output_rank() const override;
  int run(const Global& g) override;
};

/// `profile top PID` or `profile top -- CMD ARGS`: py-spy top.
struct ProfileTop : Command {
  SampleOptions options;
  double interval_s = 1.0;
  bool native = false;
  std::int64_t pid = 0;
  std::vector<std::string> command;
  std::string sort = "own";
  std::uint64_t count = 0;
  std::string program_output;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

struct ProfileDump : Command {
  std::int64_t pid = 0;
  bool json = false, main_only = false, no_python = false, subprocesses = false;
  DumpOptions options;
  void declare(CLI::App& cmd) override;
  std::string complete(const CLI::App& cmd, std::vector<std::string> rest) override;
  int run(const Global& g) override;
};

}  // namespace mainboard::cli
