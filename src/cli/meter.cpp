// `mainboard meter -- CMD ARGS`: runs a command and reports what it used, as time(1) does.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/interrupts.hpp"
#include "core/text.hpp"
#include "mainboard/json.hpp"
#include "mainboard/meter.hpp"
#include "view/energy_text.hpp"
#include "view/summary.hpp"

namespace mainboard::cli {

void Meter::declare(CLI::App& cmd) {
  cmd.add_flag("--json", json, "the report as JSON on stderr");
  cmd.add_option("-o,--output", output, "also write the JSON report to this file")
      ->type_name("FILE");
  cmd.add_option("--interval", interval_ms, "sample the process tree every MS milliseconds")
      ->capture_default_str()
      ->check(number(1, 60000))
      ->type_name("MS");
  cmd.add_option("--kill-after", kill_after_s,
                 "when mainboard is interrupted (Ctrl-C, SIGTERM, SIGHUP), give the command "
                 "this long to end before SIGTERM, then SIGKILL (a second signal cuts it short)")
      ->capture_default_str()
      ->check(number(0, kNoLimit))
      ->type_name("S");
  cmd.footer("Example: mainboard meter --interval 20 -- python3 train.py --epochs 1");
}

std::string Meter::complete(const CLI::App&, std::vector<std::string> rest) {
  command = std::move(rest);
  return check_outputs({{"-o", output}});
}

/// The command's own output stays on stdout and stderr untouched; the report goes to stderr
/// after it (as time(1) does), or as JSON to stderr or a file. Exit status: the command's.
int Meter::run(const Global& g) {
  if (command.empty()) {
    std::fprintf(stderr, "mainboard: error: meter needs a command: mainboard meter -- CMD ARGS…\n");
    return 2;
  }
  Machine machine(machine_options(g));
  MeterOptions opts;
  opts.interval = std::chrono::milliseconds(interval_ms);
  opts.kill_after_s = kill_after_s;
  core::InterruptHandlers interrupts(interrupt_signals());
  auto m = measure_command(machine, command, opts);
  nlohmann::json j = m;
  auto write_file = [&] {
    if (!output.empty())
      write_or_fall_back(output, "report",
                         [&](const std::string& f) { core::write_file_atomic(f, json_text(j)); });
  };
  if (json) {
    print_json(j, stderr);
    write_file();
    return m.exit_code;
  }
  using view::bytes;
  view::Style style{view::want_color(g.color, 2)};
  std::string r = style.bold("mainboard meter: " + mainboard::core::shell_quote(command)) + "\n";
  auto row = [&](const char* label, const std::string& text) {
    r += "  " + style.label(fmt::format("{:<13}", label)) + text + "\n";
  };
  row("exit", m.signal ? fmt::format("{} (signal {})", m.exit_code, *m.signal)
                       : std::to_string(m.exit_code));
  row("wall", fmt::format("{:.2f} s", m.wall_s));
  double cpu = m.user_s + m.system_s;
  row("cpu", fmt::format("user {:.2f} s, system {:.2f} s ({:.0f} % of one core)", m.user_s,
                         m.system_s, m.wall_s > 0 ? 100.0 * cpu / m.wall_s : 0.0));
  if (m.peak_pss_bytes)
    row("peak memory",
        fmt::format("{} proportional (PSS) for the whole tree; {} summed RSS (at most {} "
                    "process{}; largest single process {})",
                    bytes(m.peak_pss_bytes), bytes(m.peak_tree_rss_bytes), m.peak_processes,
                    m.peak_processes == 1 ? "" : "es", bytes(m.max_process_rss_bytes)));
  else
    row("peak memory",
        fmt::format("{} for the whole tree (summed RSS; at most {} process{}; largest single "
                    "process {})",
                    bytes(m.peak_rss_bytes), m.peak_processes, m.peak_processes == 1 ? "" : "es",
                    bytes(m.max_process_rss_bytes)));
  row("page faults", fmt::format("{} major (from disk), {} minor", m.major_faults, m.minor_faults));
  row("switches", fmt::format("{} voluntary (waits), {} involuntary (preempted)",
                              m.voluntary_switches, m.involuntary_switches));
  row("file system",
      fmt::format("{} read, {} written", bytes(m.fs_inputs * 512), bytes(m.fs_outputs * 512)));
  if (m.peak_gpu_bytes) {
    std::string by;
    for (const auto& [uuid, peak] : m.peak_gpu_bytes_by_gpu)
      by += (by.empty() ? "" : ", ") + uuid + " " + bytes(peak);
    row("peak GPU", bytes(*m.peak_gpu_bytes) + (by.empty() ? "" : " (" + by + ")"));
  } else {
    row("peak GPU", style.dim("no GPU to read"));
  }
  row("energy", view::energy_text(m.energy));
  row("samples", fmt::format("{} every {:.0f} ms", m.samples, m.interval_ms));
  print(r, style.color, stderr);
  write_file();
  return m.exit_code;
}

}  // namespace mainboard::cli
