// The command line parsed in-process (cli::parse): which command, with which options, and the
// usage errors, without starting the program. The spawning tests (cli_test.cpp) check what the
// program does with them: exit codes, streams, signals.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "cli/cli.hpp"
#include "mainboard/version.hpp"

namespace mainboard::cli {
namespace {

Parsed parsed(const std::vector<std::string>& args) {
  auto result = parse(args);
  if (auto* exit = std::get_if<Exit>(&result)) {
    ADD_FAILURE() << "parsing ended with " << exit->code << ": " << exit->err;
    return {};
  }
  return std::move(std::get<Parsed>(result));
}

template <class C>
C& as(Parsed& p) {
  auto* c = dynamic_cast<C*>(p.command.get());
  if (!c) throw std::runtime_error("not the command expected");
  return *c;
}

Exit ended(const std::vector<std::string>& args) {
  auto result = parse(args);
  if (auto* exit = std::get_if<Exit>(&result)) return *exit;
  ADD_FAILURE() << "parsed, and was expected to end";
  return {};
}

}  // namespace

TEST(Parse, NoCommandIsTheSchematicWithTheGlobalOptions) {
  auto p = parsed({"--width", "100", "--color", "never", "--no-cache"});
  EXPECT_EQ(p.info, nullptr);
  EXPECT_NE(dynamic_cast<View*>(p.command.get()), nullptr);
  EXPECT_EQ(p.global.width, 100);
  EXPECT_EQ(p.global.color, "never");
  EXPECT_TRUE(p.global.no_cache);
}

TEST(Parse, GlobalOptionsAreUnderstoodAfterTheCommandsName) {
  auto p =
      parsed({"snapshot", "--json", "--sysroot", MAINBOARD_FIXTURES "/hosts/grace-hopper", "-v"});
  ASSERT_NE(p.info, nullptr);
  EXPECT_STREQ(p.info->path, "snapshot");
  EXPECT_TRUE(as<Snapshot>(p).json);
  EXPECT_FALSE(as<Snapshot>(p).no_toolchain);
  EXPECT_EQ(p.global.sysroot, MAINBOARD_FIXTURES "/hosts/grace-hopper");
  EXPECT_TRUE(p.global.verbose);
}

TEST(Parse, TopoTakesJsonAndTheGlobalOptions) {
  auto p = parsed({"topo", "--json", "--sysroot", MAINBOARD_FIXTURES "/hosts/dgx-8gpu"});
  ASSERT_NE(p.info, nullptr);
  EXPECT_STREQ(p.info->path, "topo");
  EXPECT_TRUE(as<Topo>(p).json);
  EXPECT_EQ(p.global.sysroot, MAINBOARD_FIXTURES "/hosts/dgx-8gpu");
  auto plain = parsed({"topo"});
  EXPECT_FALSE(as<Topo>(plain).json);
  EXPECT_EQ(ended({"topo", "--matrix"}).code, 2);
}

TEST(Parse, MeterTakesTheCommandAfterDashesOrAfterItsOptions) {
  auto p = parsed({"meter", "--interval", "20", "--json", "--", "python3", "-c", "pass"});
  auto& m = as<Meter>(p);
  EXPECT_EQ(m.interval_ms, 20);
  EXPECT_TRUE(m.json);
  EXPECT_EQ(m.command, (std::vector<std::string>{"python3", "-c", "pass"}));
  // Without "--", the first word that is not one of its options starts the command, whose own
  // options are its own; global options before it are meter's.
  auto q = parsed({"meter", "--color", "never", "sleep", "--help"});
  EXPECT_EQ(as<Meter>(q).command, (std::vector<std::string>{"sleep", "--help"}));
  EXPECT_EQ(q.global.color, "never");
}

TEST(Parse, ProfileRunGathersItsSamplingOptions) {
  // Stacks are unwound with CFI unless fp is asked for.
  auto plain = parsed({"profile", "run", "--", "./train"});
  EXPECT_EQ(as<ProfileRun>(plain).options.call_graph, CallGraph::dwarf);
  auto p = parsed({"profile", "run", "--hz", "999", "--gpu", "--no-children", "--call-graph", "fp",
                   "--user-only", "--wall", "--timeout", "5", "-o", "-", "--", "./train"});
  ASSERT_NE(p.info, nullptr);
  EXPECT_STREQ(p.info->path, "profile run");
  auto& r = as<ProfileRun>(p);
  EXPECT_EQ(r.options.hz, 999);
  EXPECT_TRUE(has(r.options.features, Feature::gpu_activity));
  EXPECT_FALSE(r.options.children);
  EXPECT_EQ(r.options.call_graph, CallGraph::frame_pointers);
  EXPECT_FALSE(r.options.kernel);
  EXPECT_TRUE(r.options.wall);
  EXPECT_EQ(r.options.timeout_s, 5);
  EXPECT_EQ(r.out.output, "-");
  EXPECT_EQ(r.command, (std::vector<std::string>{"./train"}));
}

TEST(Parse, DumpAttachBusyAndWaitIdle) {
  auto d = parsed({"profile", "dump", "42", "--main-thread", "--no-python", "--json"});
  EXPECT_EQ(as<ProfileDump>(d).pid, 42);
  EXPECT_FALSE(as<ProfileDump>(d).options.all_threads);
  EXPECT_FALSE(as<ProfileDump>(d).options.python);
  EXPECT_FALSE(as<ProfileDump>(d).subprocesses);
  EXPECT_FALSE(as<ProfileDump>(d).options.nonblocking);
  auto tree = parsed({"profile", "dump", "42", "--subprocesses", "--nonblocking"});
  EXPECT_TRUE(as<ProfileDump>(tree).subprocesses);
  EXPECT_TRUE(as<ProfileDump>(tree).options.nonblocking);
  auto a = parsed({"profile", "attach", "42", "--duration", "2.5", "--folded", "-", "--svg",
                   "a.svg", "--per-process"});
  EXPECT_TRUE(as<ProfileAttach>(a).options.children);  // its whole tree, by default
  EXPECT_FALSE(as<ProfileAttach>(a).options.nonblocking);
  EXPECT_FALSE(as<ProfileAttach>(a).options.gil);
  auto gil = parsed({"profile", "attach", "42", "--gil"});
  EXPECT_TRUE(as<ProfileAttach>(gil).options.gil);
  auto alone = parsed({"profile", "attach", "42", "--no-children", "--nonblocking"});
  EXPECT_FALSE(as<ProfileAttach>(alone).options.children);
  EXPECT_TRUE(as<ProfileAttach>(alone).options.nonblocking);
  EXPECT_EQ(as<ProfileAttach>(a).options.duration_s, 2.5);
  EXPECT_EQ(as<ProfileAttach>(a).out.pictures.folded, "-");
  EXPECT_EQ(as<ProfileAttach>(a).out.pictures.svg, "a.svg");
  EXPECT_EQ(as<ProfileAttach>(a).out.pictures.roots, FlameRoots::process);
  auto r = parsed({"profile", "report", "p.json", "--html", "p.html", "--per-thread"});
  EXPECT_EQ(as<ProfileReport>(r).pictures.html, "p.html");
  EXPECT_EQ(as<ProfileReport>(r).pictures.roots, FlameRoots::thread);
  auto b = parsed({"busy", "--index", "1", "--util", "10"});
  EXPECT_FALSE(as<Busy>(b).wait);
  EXPECT_TRUE(as<Busy>(b).index_given);
  EXPECT_EQ(as<Busy>(b).index, 1u);
  EXPECT_EQ(as<Busy>(b).thresholds.util_pct, 10);
  auto w = parsed({"wait-idle", "--timeout", "3"});
  EXPECT_TRUE(as<Busy>(w).wait);
  EXPECT_FALSE(as<Busy>(w).index_given);
  EXPECT_EQ(as<Busy>(w).timeout_s, 3);
}

TEST(Parse, FleetBuildsItsSrunCommandAndChoosesItsView) {
  auto p = parsed(
      {"fleet", "--nodes", "3", "--partition", "gpu", "check", "--strict", "--", "--account=ml"});
  auto& f = as<Fleet>(p);
  EXPECT_EQ(f.mode, Fleet::Mode::check);
  EXPECT_TRUE(f.strict);
  EXPECT_EQ(f.srun, (std::vector<std::string>{"srun", "--nodes", "3", "--partition", "gpu",
                                              "--account=ml"}));
  auto q = parsed({"fleet", "--from", "recorded", "--json"});
  EXPECT_EQ(as<Fleet>(q).mode, Fleet::Mode::show);
  EXPECT_EQ(as<Fleet>(q).from, "recorded");
  EXPECT_NE(ended({"fleet", "--from", "x", "gather", "/tmp"}).err.find("no --from"),
            std::string::npos);
}

TEST(Parse, UsageErrorsNameWhatIsWrongAndWhereTheUsageIs) {
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  for (const auto& c : std::vector<Case>{
           {{"profile", "bogus"}, "unknown command 'profile bogus' (profile's commands: report"},
           {{"profile", "bogus", "--help"}, "unknown command 'profile bogus'"},
           {{"profile"},
            "profile needs a command: report, diff, perfetto, merge, run, attach, top, dump"},
           {{"bogus"},
            "unknown command 'bogus' (commands: snapshot, toolchain, gpus, topo, check,"},
           {{"bogus"}, "(run 'mainboard --help' for usage)"},
           {{"bogus", "--help"}, "unknown command 'bogus' (commands: snapshot"},
           {{"--help", "bogus"}, "unknown command 'bogus' (commands: snapshot"},
           {{"htop", "--help"}, "unknown command 'htop'"},
           {{"top", "--interval", "0.05"}, "0.05 is below 0.1"},
           {{"top", "--once", "--json"}, "--once and --json: choose one"},
           {{"top", "--sort", "size"}, "'size' is not one of pid, user, gpu, gpu_memory, cpu"},
           {{"profile", "top"}, "profile top needs a PID or a command"},
           {{"profile", "top", "99999999999"}, "99999999999 is not a PID"},
           {{"profile", "top", "--interval", "0", "1"}, "0 is below 0.1"},
           {{"-v", "bogus", "-h"}, "unknown command 'bogus'"},
           {{"snapshot", "--bogus"}, "unknown option --bogus\n(run 'mainboard snapshot --help'"},
           {{"snapshot", "--", "x"}, "only meter, profile run and fleet take arguments after --"},
           {{"meter", "--bogus", "true"}, "unknown option --bogus\n(run 'mainboard meter --help'"},
           {{"profile", "run", "--hz", "0", "--", "true"}, "0 is below 1"},
           {{"--color", "sometimes"}, "'sometimes' is not one of auto, always, never"},
           {{"serve", "--listen", "nowhere"}, "(run 'mainboard serve --help' for usage)"},
           {{"--sysroot", "/nonexistent/root", "gpus"}, "--sysroot /nonexistent/root: no such"},
       }) {
    auto exit = ended(c.args);
    EXPECT_EQ(exit.code, 2) << c.args[0];
    EXPECT_TRUE(exit.out.empty());
    EXPECT_NE(exit.err.find(c.said), std::string::npos) << exit.err;
  }
}

TEST(Parse, HelpAndVersionEndParsingWithZero) {
  auto version = ended({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out, std::string("mainboard ") + kVersion + "\n");
  // Alone, it is answered before the table is built; beside a global option, by the parser:
  // the same words.
  auto parsed_version = ended({"--no-cache", "--version"});
  EXPECT_EQ(parsed_version.code, 0);
  EXPECT_EQ(parsed_version.out, version.out);
  auto help = ended({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("Usage: mainboard"), std::string::npos);
  // Every command of the table is listed, and answers --help.
  for (const auto& info : commands()) {
    std::string path = info.path;
    std::string name = path.substr(path.rfind(' ') + 1);
    if (path.find(' ') == std::string::npos) {
      EXPECT_NE(help.out.find("  " + name + " "), std::string::npos) << name;
    }
    std::vector<std::string> args;
    for (std::size_t at = 0, space; at <= path.size(); at = space + 1) {
      space = path.find(' ', at);
      if (space == std::string::npos) space = path.size();
      args.push_back(path.substr(at, space - at));
    }
    args.push_back("--help");
    auto own = ended(args);
    EXPECT_EQ(own.code, 0) << path;
    EXPECT_NE(own.out.find(info.help), std::string::npos) << path;
  }
}

}  // namespace mainboard::cli
