#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>

#include "core/process.hpp"
#include "mainboard/runner.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {
LocalRunner system_runner() {
  return LocalRunner("/usr/bin:/bin");
}
Command sh(const std::string& script, int timeout_ms = 5000) {
  Command c;
  c.argv = {"/bin/sh", "-c", script};
  c.timeout = std::chrono::milliseconds(timeout_ms);
  return c;
}
}  // namespace

TEST(LocalRunner, CapturesStreamsAndExitCode) {
  auto r = system_runner().run(sh("echo out; echo err >&2; exit 3"));
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.ok());
}

TEST(LocalRunner, ChildrenSeeCLocaleAndEmptyStdin) {
  auto r = system_runner().run(sh("echo $LC_ALL; cat"));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "C\n");
}

TEST(LocalRunner, KillsAtTheDeadline) {
  auto r = system_runner().run(sh("sleep 30", 200));
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
}

// A command given a grace at its deadline is asked to end (SIGTERM) and may clean up, as srun
// must to give its Slurm allocation back; one that ignores it is killed when the grace is over.
TEST(LocalRunner, AGraceAtTheDeadlineLetsTheCommandCleanUp) {
  auto polite = sh("trap 'echo cleaned up; exit 3' TERM; while :; do sleep 0.05; done", 300);
  polite.stop_grace = std::chrono::seconds(20);
  auto r = system_runner().run(polite);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.out, "cleaned up\n");
  EXPECT_FALSE(r.ok());
  // Without a grace, SIGKILL at once: nothing was cleaned up.
  auto blunt = system_runner().run(
      sh("trap 'echo cleaned up; exit 3' TERM; while :; do sleep 0.05; done", 300));
  EXPECT_TRUE(blunt.timed_out);
  EXPECT_EQ(blunt.out, "");
  // One that ignores SIGTERM is killed at the end of the grace, not waited for.
  auto stubborn = sh("trap '' TERM; while :; do sleep 0.05; done", 300);
  stubborn.stop_grace = std::chrono::milliseconds(500);
  auto start = std::chrono::steady_clock::now();
  auto s = system_runner().run(stubborn);
  EXPECT_TRUE(s.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(LocalRunner, DoesNotWaitForABackgroundGrandchildHoldingThePipe) {
  // The leader exits at once; its background child keeps stdout open for 30 s. We must return
  // with the leader's status rather than wait for the pipe to close.
  auto r = system_runner().run(sh("sleep 30 & echo done", 20000));
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.out, "done\n");
  EXPECT_FALSE(r.timed_out);
}

TEST(LocalRunner, BatchKeepsOrder) {
  std::vector<Command> batch;
  for (int i = 0; i < 6; ++i)
    batch.push_back(sh("echo " + std::to_string(i)));
  batch.push_back(Command{{"definitely-not-a-program-7"}, std::chrono::milliseconds(1000)});
  auto results = system_runner().run_all(batch);
  ASSERT_EQ(results.size(), batch.size());
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(results[i].out, std::to_string(i) + "\n");
  EXPECT_FALSE(results.back().started);
  EXPECT_NE(results.back().error.find("not found on PATH"), std::string::npos);
}

TEST(LocalRunner, TruncatesHugeOutput) {
  Command c = sh("head -c 200000 /dev/zero");
  c.max_output_bytes = 1000;
  auto r = system_runner().run(c);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.out.size(), 1000u);
}

TEST(LocalRunner, EmptyArgvIsAnErrorNotACrash) {
  auto r = system_runner().run(Command{});
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.error.empty());
}

TEST(LocalRunner, FindsOnlyExecutableRegularFiles) {
  TempDir dir;
  auto tool = dir.write("bin/tool", "#!/bin/sh\necho hi\n");
  ::chmod(tool.c_str(), 0755);
  dir.write("bin/plain", "not executable");
  dir.mkdir("bin/adir");
  LocalRunner runner((dir.path() / "bin").string() + "::relative/bin");
  EXPECT_EQ(runner.find_executable("tool"), tool.string());
  EXPECT_FALSE(runner.find_executable("plain"));
  EXPECT_FALSE(runner.find_executable("adir"));
  EXPECT_FALSE(runner.find_executable("../bin/tool"));
  EXPECT_EQ(runner.run(Command{{"tool"}}).out, "hi\n");
}

TEST(ReplayRunner, AnswersFromTheRecord) {
  CommandResult gcc;
  gcc.exit_code = 0;
  gcc.out = "gcc 12.2.0\n";
  ReplayRunner runner({{"gcc", "/usr/bin/gcc"}}, {{{"/usr/bin/gcc", "--version"}, gcc}});
  EXPECT_EQ(runner.find_executable("gcc"), "/usr/bin/gcc");
  EXPECT_FALSE(runner.find_executable("clang"));
  auto r = runner.run(Command{{"/usr/bin/gcc", "--version"}});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "gcc 12.2.0\n");
  auto missing = runner.run(Command{{"/usr/bin/gcc", "-v"}});
  EXPECT_FALSE(missing.started);
}

TEST(LocalRunner, EnvironmentChangesSetAndUnset) {
  ::setenv("MAINBOARD_TEST_INHERITED", "yes", 1);
  Command c = sh("echo \"${MAINBOARD_TEST_INHERITED:-unset} $MAINBOARD_TEST_NEW\"");
  c.environment["MAINBOARD_TEST_NEW"] = "new";
  EXPECT_EQ(system_runner().run(c).out, "yes new\n");
  c.environment["MAINBOARD_TEST_INHERITED"] = std::nullopt;
  EXPECT_EQ(system_runner().run(c).out, "unset new\n");
  ::unsetenv("MAINBOARD_TEST_INHERITED");
}

TEST(FindProgram, SearchesPathAsAShellDoes) {
  TempDir dir;
  auto tool = dir.write("bin/tool", "#!/bin/sh\necho bin\n");
  ::chmod(tool.c_str(), 0755);
  auto here = dir.write("here", "#!/bin/sh\necho here\n");
  ::chmod(here.c_str(), 0755);
  dir.write("bin/plain", "not executable");
  dir.mkdir("bin/adir");
  auto bin = (dir.path() / "bin").string();
  EXPECT_EQ(core::find_program("tool", bin), tool.string());
  EXPECT_FALSE(core::find_program("plain", bin));
  EXPECT_FALSE(core::find_program("adir", bin));
  EXPECT_FALSE(core::find_program("", bin));
  // A name with a slash is a path, made absolute; nothing is searched for it.
  EXPECT_EQ(core::find_program(tool.string(), ""), tool.string());
  EXPECT_FALSE(core::find_program((dir.path() / "bin/plain").string(), bin));
  // An empty entry is the current directory and a relative entry is relative to it, as for
  // execvp(3): the program a user's shell would start.
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  auto empty_entry = core::find_program("here", "/nonexistent::" + bin);
  auto relative_entry = core::find_program("tool", "bin");
  auto dotted = core::find_program("./here", "");
  std::filesystem::current_path(cwd);
  EXPECT_EQ(empty_entry, here.string());
  EXPECT_EQ(relative_entry, tool.string());
  EXPECT_EQ(dotted, here.string());
  EXPECT_EQ(core::not_found_reason("tool"), "not found on PATH");
  EXPECT_EQ(core::not_found_reason((dir.path() / "missing").string()), "no such file");
  EXPECT_EQ(core::not_found_reason((dir.path() / "bin/plain").string()), "not an executable file");
}

// The index answers as find_program does, whichever search paths it is asked about in turn (it
// resolves a path's directories once and keeps them until another path is asked).
TEST(FindProgram, TheIndexAnswersAsTheSearchForEveryPathInTurn) {
  TempDir dir;
  for (const char* file : {"one/a", "two/a", "two/b", "here/c"}) {
    auto f = dir.write(file, "#!/bin/sh\n");
    ::chmod(f.c_str(), 0755);
  }
  auto one = (dir.path() / "one").string(), two = (dir.path() / "two").string();
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  core::PathIndex index;
  std::vector<std::string> paths = {
      one + ":" + two,       two,       two + ":" + one, "here:" + two,
      "/nonexistent:" + one, ":" + two, one + ":" + two};
  for (int round = 0; round < 2; ++round)
    for (const auto& path : paths)
      for (const char* name : {"a", "b", "c", "d"})
        EXPECT_EQ(index.find(name, path), core::find_program(name, path)) << name << " " << path;
  std::filesystem::current_path(cwd);
}

TEST(ExitStatus, ExitCodesAndSignalsAsAShellReportsThem) {
  auto exited = system_runner().run(Command{{"/bin/sh", "-c", "exit 7"}});
  EXPECT_EQ(exited.exit_code, 7);
  EXPECT_EQ(exited.signal, 0);
  auto killed = system_runner().run(Command{{"/bin/sh", "-c", "kill -TERM $$"}});
  EXPECT_EQ(killed.signal, SIGTERM);
  EXPECT_EQ(killed.exit_code, 128 + SIGTERM);
  EXPECT_FALSE(killed.ok());
}
