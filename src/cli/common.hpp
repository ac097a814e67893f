// What the commands of `mainboard` share: the global options, the help formatter, option
// validators in words, and the output helpers.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "mainboard/machine.hpp"

namespace mainboard::cli {

/// The options every command understands (before or after its name).
struct Global {
  int width = 0;  // 0: the terminal's
  std::string sysroot;
  std::string color = "auto";
  bool verbose = false;
  bool no_cache = false;
};

Machine::Options machine_options(const Global& g);

/// Help in words: an option's value as its name alone (FILE, S, HZ), its default in the
/// description; none of the parser's own notation (types, ranges, maps of values).
class Help : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_option_desc(const CLI::Option* opt) const override;
};

/// A number from `low` to `high` (either bound may be left open with ±infinity; `above` makes
/// the low bound exclusive), said in words when it is not.
CLI::Validator number(double low, double high, bool above = false);
inline constexpr double kNoLimit = std::numeric_limits<double>::infinity();

/// One of `names`, said in words when it is not.
CLI::Validator one_of(std::vector<std::string> names);

/// Text to standard output, as it is.
void print(const std::string& text, bool color = false, std::FILE* to = stdout);
/// Writes to `to` as fwrite does, keeping the errno of the first write that fell short: stdio
/// keeps only that the stream failed, and a later flush of an empty buffer says nothing of why.
void write_out(const char* data, std::size_t size, std::FILE* to);
/// The errno of the first failed write_out (0 when none failed).
int first_write_errno();

/// The command's JSON: indented by two, a line feed after it. A string that is not UTF-8 (which
/// the models never hold, but a profile's or a command's own JSON might) is written with U+FFFD
/// in place of each bad byte rather than failing the whole output.
std::string json_text(const nlohmann::json& j);
/// The same text written to `to` as it is made, a few KB at a time: never held whole.
void print_json(const nlohmann::json& j, std::FILE* to = stdout);

/// JSON to standard output, or to `output` when one is given (written atomically).
void emit_json(const nlohmann::json& j, const std::string& output);

/// The output files of a run, checked before it starts: a run is never lost to a typo in a path.
/// Empty when all can be written, else the usage error.
std::string check_outputs(const std::vector<std::pair<const char*, std::string>>& outputs);

/// A usage error when one of `outputs` is one of `inputs`, the same file under any name or link
/// (writing it would replace what is being read); else "".
std::string check_outputs_are_not_inputs(
    const std::vector<std::pair<const char*, std::string>>& outputs,
    const std::vector<std::string>& inputs);

/// Writes `write(path)`; when that fails after all (a full disk, /dev/full, a directory removed
/// meanwhile), says so and writes to a new private file in $TMPDIR instead
/// (core::make_fallback_file), named on stderr. True only when `path` itself was written: a
/// command whose requested output was not written fails, unless it keeps another's status.
bool write_or_fall_back(const std::string& path, const char* what,
                        const std::function<void(const std::string&)>& write);

/// Ctrl-C, SIGTERM (kill, scancel, a time limit) and SIGHUP (a closed terminal) during meter,
/// profile run and attach: the run ends the command step by step and keeps what it measured.
std::vector<int> interrupt_signals();

}  // namespace mainboard::cli
