#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// Small, allocation-light helpers for the text formats of /proc and /sys. Every parser is
/// total: malformed input yields an empty optional, never an exception.
namespace mainboard::core {

std::string_view trim(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);
std::vector<std::string_view> split_lines(std::string_view s);
/// Splits on runs of spaces and tabs.
std::vector<std::string_view> split_ws(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
std::string to_lower(std::string_view s);
/// `s` as valid UTF-8: each byte that does not begin or continue a well-formed sequence (a
/// torn read of another process's memory, a thread named with arbitrary bytes, a Latin-1
/// file name) becomes U+FFFD. Valid text comes back unchanged.
std::string valid_utf8(std::string_view s);
/// Whether `s` is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view s);
/// `s` as it may reach a terminal: what a terminal would obey instead of showing is written as
/// an escape, as `ls` and `git` do — C0 controls but line feed and tab (`\x1b`), DEL (`\x7f`),
/// C1 controls (U+0080–U+009F, `\u009b`) and bytes that are not UTF-8 (`\xff`). A thread, a
/// function or a board may be named anything: a name holding OSC 52 would otherwise write the
/// reader's clipboard. With `keep_color`, colour sequences (ESC [ digits and semicolons m: what
/// the views colour with) pass; no other sequence does.
std::string terminal_text(std::string_view s, bool keep_color = false);

/// Decimal integer, optionally surrounded by whitespace; rejects overflow and trailing junk.
std::optional<std::uint64_t> parse_u64(std::string_view s);
std::optional<std::int64_t> parse_i64(std::string_view s);
/// Integer in the given base; base 16 accepts an optional 0x prefix.
std::optional<std::uint64_t> parse_u64_base(std::string_view s, int base);
std::optional<double> parse_double(std::string_view s);

/// "key<sep> value" lines (as in /proc/cpuinfo, /proc/meminfo); key and value trimmed.
std::vector<std::pair<std::string_view, std::string_view>> parse_key_values(std::string_view text,
                                                                            char sep = ':');
/// Value of the first line whose key equals `key`.
std::optional<std::string_view> find_value(std::string_view text, std::string_view key,
                                           char sep = ':');

/// A Linux CPU list such as "0-3,8,10-11"; empty on malformed input or absurd ranges.
std::optional<std::vector<std::uint32_t>> parse_cpu_list(std::string_view s);

/// A size such as "32K", "1024 kB", "2 MB", "16 GB" (binary multiples, as sysfs and meminfo mean
/// them) to bytes.
std::optional<std::uint64_t> parse_size(std::string_view s);

/// Saturating multiply for byte counts read from files.
std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b);

/// An argument as a POSIX shell reads it back: bare when it holds only characters no shell
/// treats specially, else in single quotes (a quote inside as '\'').
std::string shell_quote(std::string_view arg);
/// Arguments quoted one by one, joined by spaces.
std::string shell_quote(const std::vector<std::string>& argv);

/// A Metal feature-set token of system_profiler as people say it: "spdisplays_metal3" → "Metal 3",
/// "spdisplays_mtlgpufamilyapple7" → "Metal GPUFamily Apple 7" (the Apple provider fills its
/// GPUs' metal_support with it; the view and Python label a raw token with it).
std::string metal_label(const std::string& token);

}  // namespace mainboard::core
