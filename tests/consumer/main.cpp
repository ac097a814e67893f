// A program outside the project, built against the installed package.
#include <iostream>
#include <mainboard/json.hpp>
#include <mainboard/mainboard.hpp>
#include <nlohmann/json.hpp>

int main() {
  const auto& machine = mainboard::Machine::instance();
  auto snapshot = machine.snapshot({.toolchain = false});
  nlohmann::json j = snapshot;
  std::cout << "threads=" << snapshot.cpu.info.threads << " schema=" << j["schema_version"]
            << " units=" << snapshot.unit_count() << "\n";
  return snapshot.cpu.info.threads > 0 ? 0 : 1;
}
