// libFuzzer target: Profile::parse must turn any bytes into a Profile or a mainboard::Error —
// never a crash, a hang, another exception, or an unbounded allocation.
#include <cstdint>
#include <string_view>

#include "mainboard/error.hpp"
#include "mainboard/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    auto profile = mainboard::Profile::parse(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input");
    // What loads must also export.
    (void)profile.perfetto_json();
  } catch (const mainboard::Error&) {
  }
  return 0;
}
