#pragma once

// What the tests check of another process: that mainboard let it go, and how much CPU time it
// had (what the number of on-CPU samples of it follows, whatever the wall clock).
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

/// Every thread of `pid` neither stopped nor traced.
inline void expect_let_go(pid_t pid) {
  std::string task = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(task.c_str());
  ASSERT_NE(d, nullptr);
  while (auto* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream status(task + "/" + e->d_name + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("State:", 0) == 0) {
        EXPECT_EQ(line.find("t ("), std::string::npos) << line;
      }
      if (line.rfind("TracerPid:", 0) == 0) {
        EXPECT_EQ(line, "TracerPid:\t0");
      }
    }
  }
  ::closedir(d);
}

/// The CPU time (user and system, every thread) process `pid` has had so far, in seconds; -1
/// when /proc cannot say (it has been reaped).
inline double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');  // the name may hold spaces and parentheses
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 1));
  std::string skip;
  for (int field = 3; field < 14; ++field)  // state .. cmajflt; utime is the 14th, stime the 15th
    fields >> skip;
  unsigned long long utime = 0, stime = 0;
  if (!(fields >> utime >> stime)) return -1;
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

/// How long to sample process `pid` at `hz` on CPU for about `samples` samples: its rate of CPU
/// time measured over 300 ms (on a loaded machine it gets less than its threads ask for), the
/// window kept within [`least_s`, `most_s`].
inline double attach_window(pid_t pid, double hz, double samples, double least_s, double most_s) {
  auto t0 = std::chrono::steady_clock::now();
  double before = cpu_seconds(pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  double after = cpu_seconds(pid);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double rate = (after - before) / wall;  // CPUs
  if (before < 0 || after < 0 || rate <= 0) return most_s;
  return std::clamp(samples / (rate * hz), least_s, most_s);
}

/// The CPU time (user and system) of this process's children that have been waited for, in
/// seconds: before and after a Sampler::run, what the program it ran had.
inline double children_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}
