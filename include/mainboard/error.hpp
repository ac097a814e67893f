#pragma once

#include <stdexcept>
#include <string>

#include "mainboard/export.hpp"

namespace mainboard {

/// Thrown by operations on user input: a file to load, a command-line argument, a process to
/// start or attach to. The message names the file, field or pid concerned. Probes of the machine
/// never throw: a reading they cannot take is marked unsupported instead.
class MAINBOARD_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A command that could not be started (Sampler::run, measure_command): not found, or not
/// something that can be executed. exit_code() is what a shell would exit with: 127 when
/// nothing of that name exists, 126 when it exists but cannot be executed (a directory, a file
/// without execute permission, a file the kernel cannot run).
class MAINBOARD_API CommandError : public Error {
 public:
  CommandError(const std::string& message, int exit_code) : Error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

/// An operation that was asked to stop by a signal (Ctrl-C, SIGTERM, SIGHUP) before it was
/// done, after putting back what it had taken (a process it had stopped is let go).
class MAINBOARD_API Interrupted : public Error {
 public:
  Interrupted(const std::string& message, int signal) : Error(message), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

}  // namespace mainboard
