// The session of the environment: `mainboard profile run` sets MAINBOARD_PROFILE in the program
// it launches, and a program that links mainboard::spans records its spans from the start and
// saves them at exit, for the command to merge with the stack samples. Spans only: nothing is
// loaded, started or read beyond them, and function names are resolved by the reader.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/text.hpp"
#include "mainboard/profiler.hpp"
#include "spans/session.hpp"

namespace mainboard::detail {

namespace {

Profiler* g_session = nullptr;
std::string* g_output = nullptr;

void save_at_exit() {
  if (!g_session || !g_output) return;
  try {
    g_session->stop();
    g_session->result().save(*g_output);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mainboard: cannot save the profile for `mainboard profile run`: %s\n",
                 e.what());
  }
}

}  // namespace

void start_from_environment() noexcept {
  // MAINBOARD_PROFILE="out=/dir/spans-%p.json,max_spans=100000": %p becomes this process's id.
  const char* spec = std::getenv("MAINBOARD_PROFILE");
  if (!spec || !*spec) return;
  try {
    std::string out;
    Collection c;
    c.features = Feature::spans;
    for (auto item : core::split(spec, ',')) {
      auto eq = item.find('=');
      if (eq == std::string_view::npos) continue;
      auto key = item.substr(0, eq), value = item.substr(eq + 1);
      if (key == "out")
        out = std::string(value);
      else if (key == "max_spans")
        if (auto n = core::parse_u64(value)) c.max_spans = *n;
    }
    auto p = out.find("%p");
    if (p != std::string::npos) out.replace(p, 2, std::to_string(::getpid()));
    if (out.empty()) return;
    g_output = new std::string(out);
    g_session = start_environment_session(c);  // lives until exit, like the process it profiles
    std::atexit(save_at_exit);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mainboard: MAINBOARD_PROFILE is set but no session could start: %s\n",
                 e.what());
  }
}

namespace {
const bool g_started = (start_from_environment(), true);
}  // namespace

}  // namespace mainboard::detail
