#pragma once

#include <stdlib.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

/// An environment variable set for the scope of a test, then put back as it was.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// A temporary directory removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mainboard-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  std::filesystem::path write(const std::string& rel, const std::string& content) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << content;
    return p;
  }

  void mkdir(const std::string& rel) const { std::filesystem::create_directories(path_ / rel); }

 private:
  std::filesystem::path path_;
};

inline std::string fixture_host(const std::string& name) {
  // Built by appending: GCC 12 warns falsely (-Warray-bounds) on a chain of operator+ here.
  std::string path = MAINBOARD_FIXTURES;
  path += "/hosts/";
  path += name;
  return path;
}

/// The emulator the tests run under (MAINBOARD_TEST_EMULATED, set by the arm64 test preset), or
/// null when they run natively.
inline const char* test_emulator() {
  const char* e = std::getenv("MAINBOARD_TEST_EMULATED");
  return e && *e ? e : nullptr;
}

/// Skips a test that needs what qemu-user does not give an emulated program: starting the
/// project's own arm64 programs (no binfmt_misc here), perf_event_open, ptrace and
/// process_vm_readv on another process, or the real /proc/self. `needs` says which.
#define MAINBOARD_NATIVE_ONLY(needs)           \
  if (const char* emulator_ = test_emulator()) \
  GTEST_SKIP() << "native only (under " << emulator_ << "): needs " << (needs)
