#pragma once
// A Machine over one of the recorded hosts of tests/fixtures/hosts, as most tests take one.
#include <string>

#include "mainboard/machine.hpp"
#include "test_util.hpp"

/// Options reading everything from the recorded host `name`.
inline mainboard::Machine::Options fixture_options(const std::string& name) {
  mainboard::Machine::Options o;
  o.sysroot = fixture_host(name);
  return o;
}

/// One snapshot of the recorded host `name`, toolchain included.
inline mainboard::MachineSnapshot fixture_snapshot(const std::string& name) {
  mainboard::Machine m(fixture_options(name));
  return m.snapshot();
}
