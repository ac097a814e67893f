#pragma once

// What the tests check of another process: that mainboard let it go.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/types.h>

#include <fstream>
#include <string>

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
