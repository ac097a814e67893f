#include "mainboard/runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/clock.hpp"
#include "core/log.hpp"
#include "core/process.hpp"
#include "core/pyenv.hpp"
#include "core/text.hpp"

extern char** environ;

namespace mainboard {

CommandResult Runner::run(const Command& command) const {
  auto results = run_all({command});
  return results.empty() ? CommandResult{} : std::move(results.front());
}

std::optional<std::string> Runner::launched_program(const std::string&) const {
  return std::nullopt;
}

LocalRunner::LocalRunner(std::string path) : path_(std::move(path)) {}

std::optional<std::string> LocalRunner::find_executable(std::string_view name) const {
  if (name.find('/') != std::string_view::npos) return std::nullopt;
  return core::find_program(name, path_);
}

std::optional<std::string> LocalRunner::launched_program(const std::string& path) const {
  // Asked of every tool found: the context (two stats) is made only for a shim.
  return core::pyenv_shim_target(path, [this] {
    core::PyenvContext context;
    context.env = [](std::string_view key) -> std::optional<std::string> {
      const char* v = std::getenv(std::string(key).c_str());
      return v ? std::optional<std::string>(v) : std::nullopt;
    };
    // Where pyenv looks for .python-version: PYENV_DIR, else the shell's (logical) PWD when it
    // is this directory, else this directory's physical path.
    struct stat here {
    }, there{};
    const char* pyenv_dir = std::getenv("PYENV_DIR");
    const char* pwd = std::getenv("PWD");
    std::error_code ec;
    if (pyenv_dir && *pyenv_dir)
      context.directory = pyenv_dir;
    else if (pwd && *pwd == '/' && ::stat(pwd, &there) == 0 && ::stat(".", &here) == 0 &&
             here.st_dev == there.st_dev && here.st_ino == there.st_ino)
      context.directory = pwd;
    else
      context.directory = std::filesystem::current_path(ec).string();
    context.path = path_;
    return context;
  });
}

namespace {

struct Child {
  pid_t pid = -1;
  int fds[2] = {-1, -1};  // stdout, stderr read ends
  std::int64_t deadline_ns = 0;
  std::int64_t grace_ns = 0;  // after SIGTERM at the deadline, before SIGKILL (0: none)
  bool stopping = false;      // SIGTERM sent
  std::int64_t exited_at_ns = 0;
  bool reaped = false;
  std::size_t max_bytes = 0;
};

/// The child environment: ours with the command's changes, and LC_ALL=C (unless the command
/// sets it) so tools print versions in one language.
std::vector<std::string> child_environment(const Command& command) {
  auto changes = command.environment;
  if (!changes.count("LC_ALL")) changes["LC_ALL"] = "C";
  if (!changes.count("LANGUAGE")) changes["LANGUAGE"] = std::nullopt;
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto name = entry.substr(0, entry.find('='));
    if (changes.count(std::string(name))) continue;
    env.emplace_back(entry);
  }
  for (const auto& [name, value] : changes)
    if (value) env.push_back(name + "=" + *value);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool spawn(const std::string& exe, const Command& command, Child& child, CommandResult& result) {
  auto env = child_environment(command);
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    ::close(out[0]);
    ::close(out[1]);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  // Its own process group, so a deadline kills whatever it started too.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> args(command.argv.begin(), command.argv.end());
  auto argv = pointers(args);
  auto envp = pointers(env);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    result.error = exe + ": " + std::strerror(rc);
    return false;
  }
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  child.pid = pid;
  child.fds[0] = out[0];
  child.fds[1] = err[0];
  child.deadline_ns = core::monotonic_ns() + command.timeout.count() * 1'000'000;
  child.grace_ns = command.stop_grace.count() * 1'000'000;
  child.max_bytes = command.max_output_bytes;
  result.started = true;
  return true;
}

void record_status(int status, CommandResult& result) {
  auto s = core::exit_status(status);
  result.exit_code = s.exit_code;
  result.signal = s.signal;
}

}  // namespace

std::vector<CommandResult> LocalRunner::run_all(const std::vector<Command>& commands) const {
  std::vector<CommandResult> results(commands.size());
  std::vector<Child> children(commands.size());

  for (std::size_t i = 0; i < commands.size(); ++i) {
    const auto& argv = commands[i].argv;
    if (argv.empty()) {
      results[i].error = "empty command";
      continue;
    }
    std::optional<std::string> exe;
    if (argv[0].find('/') != std::string::npos)
      exe = argv[0];
    else
      exe = find_executable(argv[0]);
    if (!exe) {
      results[i].error = argv[0] + ": not found on PATH";
      continue;
    }
    spawn(*exe, commands[i], children[i], results[i]);
  }

  // After the leader exits, descendants that still hold its pipes get this long to finish.
  constexpr std::int64_t kGraceNs = 100'000'000;
  char buf[16384];
  while (true) {
    std::vector<pollfd> pfds;
    std::vector<std::pair<std::size_t, int>> owners;
    std::int64_t now = core::monotonic_ns();
    std::int64_t next_wake = now + 50'000'000;
    bool pending = false;
    for (std::size_t i = 0; i < children.size(); ++i) {
      auto& c = children[i];
      if (c.pid < 0) continue;
      if (!c.reaped) {
        int status = 0;
        pid_t r = ::waitpid(c.pid, &status, WNOHANG);
        if (r == c.pid) {
          record_status(status, results[i]);
          c.reaped = true;
          c.exited_at_ns = now;
        }
      }
      bool open = c.fds[0] >= 0 || c.fds[1] >= 0;
      std::int64_t limit =
          c.reaped ? std::min(c.deadline_ns, c.exited_at_ns + kGraceNs) : c.deadline_ns;
      if (!c.reaped && !c.stopping && c.grace_ns > 0 && now >= limit) {
        // Asked to end first; what it prints meanwhile is still read.
        ::kill(-c.pid, SIGTERM);
        c.stopping = true;
        results[i].timed_out = true;
        c.deadline_ns = limit = now + c.grace_ns;
      }
      if ((open || !c.reaped) && now >= limit) {
        ::kill(-c.pid, SIGKILL);
        if (!c.reaped) {
          int status = 0;
          while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
          }
          record_status(status, results[i]);
          results[i].timed_out = true;
          results[i].signal = 0;
          c.reaped = true;
        }
        close_fd(c.fds[0]);
        close_fd(c.fds[1]);
        open = false;
      }
      if (!open && c.reaped) continue;
      pending = true;
      next_wake = std::min(next_wake, limit);
      for (int k = 0; k < 2; ++k) {
        if (c.fds[k] < 0) continue;
        pfds.push_back({c.fds[k], POLLIN, 0});
        owners.emplace_back(i, k);
      }
    }
    if (!pending) break;
    // Without open pipes we still poll (on nothing) to wait for exits in small steps.
    int wait_ms = static_cast<int>(
        std::clamp<std::int64_t>((next_wake - now) / 1'000'000, 1, pfds.empty() ? 2 : 50));
    int n = ::poll(pfds.data(), pfds.size(), wait_ms);
    if (n < 0 && errno != EINTR) break;
    for (std::size_t p = 0; p < pfds.size(); ++p) {
      if (!(pfds[p].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      auto [i, k] = owners[p];
      auto& c = children[i];
      std::string& sink = k == 0 ? results[i].out : results[i].err;
      while (true) {
        ssize_t got = ::read(c.fds[k], buf, sizeof buf);
        if (got > 0) {
          std::size_t room = c.max_bytes > sink.size() ? c.max_bytes - sink.size() : 0;
          if (static_cast<std::size_t>(got) > room) results[i].truncated = true;
          sink.append(buf, std::min(room, static_cast<std::size_t>(got)));
          continue;
        }
        if (got == 0 || (errno != EAGAIN && errno != EINTR)) close_fd(c.fds[k]);
        if (got < 0 && errno == EINTR) continue;
        break;
      }
    }
  }
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (results[i].timed_out)
      core::log().debug("command {} timed out after {} ms", commands[i].argv[0],
                        commands[i].timeout.count());
  }
  return results;
}

ReplayRunner::ReplayRunner(std::map<std::string, std::string> executables,
                           std::vector<Entry> entries)
    : executables_(executables.begin(), executables.end()), entries_(std::move(entries)) {}

std::optional<std::string> ReplayRunner::find_executable(std::string_view name) const {
  auto it = executables_.find(name);
  if (it == executables_.end()) return std::nullopt;
  return it->second;
}

std::vector<CommandResult> ReplayRunner::run_all(const std::vector<Command>& commands) const {
  std::vector<CommandResult> results;
  results.reserve(commands.size());
  for (const auto& command : commands) {
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const Entry& e) { return e.argv == command.argv; });
    if (it != entries_.end()) {
      results.push_back(it->result);
      results.back().started = true;
      continue;
    }
    CommandResult missing;
    missing.error = (command.argv.empty() ? std::string("empty command") : command.argv[0]) +
                    ": no recorded output";
    results.push_back(std::move(missing));
  }
  return results;
}

}  // namespace mainboard
