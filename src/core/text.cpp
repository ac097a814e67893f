#include "core/text.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>

namespace mainboard::core {

namespace {
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < s.size()) {
    auto pos = s.find('\n', start);
    if (pos == std::string_view::npos) pos = s.size();
    auto line = s.substr(start, pos - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    start = pos + 1;
  }
  return out;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
      ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t')
      ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::uint64_t> parse_u64_base(std::string_view s, int base) {
  s = trim(s);
  if (base == 16 && (starts_with(s, "0x") || starts_with(s, "0X"))) s.remove_prefix(2);
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  return parse_u64_base(s, 10);
}

std::optional<std::int64_t> parse_i64(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty() || s.size() > 64) return std::nullopt;
  // from_chars, not strtod: strtod follows the C locale, so a host program that calls
  // setlocale(LC_ALL, "de_DE.UTF-8") would read "2400.000" as 2400 and stop at the point, or
  // refuse it. The files we parse always use a point.
  if (s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  if (!(v == v) || v == std::numeric_limits<double>::infinity() ||
      v == -std::numeric_limits<double>::infinity())
    return std::nullopt;
  return v;
}

std::vector<std::pair<std::string_view, std::string_view>> parse_key_values(std::string_view text,
                                                                            char sep) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (auto line : split_lines(text)) {
    auto pos = line.find(sep);
    if (pos == std::string_view::npos) continue;
    out.emplace_back(trim(line.substr(0, pos)), trim(line.substr(pos + 1)));
  }
  return out;
}

std::optional<std::string_view> find_value(std::string_view text, std::string_view key, char sep) {
  for (auto line : split_lines(text)) {
    auto pos = line.find(sep);
    if (pos == std::string_view::npos) continue;
    if (trim(line.substr(0, pos)) == key) return trim(line.substr(pos + 1));
  }
  return std::nullopt;
}

std::optional<std::vector<std::uint32_t>> parse_cpu_list(std::string_view s) {
  // A CPU list never names more CPUs than the kernel's NR_CPUS; 1<<16 is far above any real
  // machine and keeps a hostile "0-4294967295" from allocating gigabytes.
  constexpr std::uint64_t kMaxCpus = 1u << 16;
  std::vector<std::uint32_t> out;
  s = trim(s);
  if (s.empty()) return out;
  for (auto part : split(s, ',')) {
    part = trim(part);
    auto dash = part.find('-');
    if (dash == std::string_view::npos) {
      auto v = parse_u64(part);
      if (!v || *v >= kMaxCpus) return std::nullopt;
      out.push_back(static_cast<std::uint32_t>(*v));
    } else {
      auto a = parse_u64(part.substr(0, dash));
      auto b = parse_u64(part.substr(dash + 1));
      if (!a || !b || *a > *b || *b >= kMaxCpus) return std::nullopt;
      if (out.size() + (*b - *a + 1) > kMaxCpus) return std::nullopt;
      for (auto i = *a; i <= *b; ++i)
        out.push_back(static_cast<std::uint32_t>(i));
    }
  }
  return out;
}

std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::nullopt;
  return a * b;
}

std::optional<std::uint64_t> parse_size(std::string_view s) {
  s = trim(s);
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
    ++i;
  auto number = parse_u64(s.substr(0, i));
  if (!number) return std::nullopt;
  auto unit = to_lower(trim(s.substr(i)));
  std::uint64_t mult = 1;
  if (unit.empty() || unit == "b" || unit == "bytes")
    mult = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    mult = 1ull << 10;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    mult = 1ull << 20;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    mult = 1ull << 30;
  else if (unit == "t" || unit == "tb" || unit == "tib")
    mult = 1ull << 40;
  else
    return std::nullopt;
  return checked_mul(*number, mult);
}

std::string shell_quote(std::string_view a) {
  constexpr std::string_view safe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%";
  if (!a.empty() && a.find_first_not_of(safe) == std::string_view::npos) return std::string(a);
  std::string out = "'";
  for (char c : a)
    out += c == '\'' ? std::string_view("'\\''") : std::string_view(&c, 1);
  return out + "'";
}

std::string shell_quote(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv)
    out += (out.empty() ? "" : " ") + shell_quote(a);
  return out;
}

namespace {

/// The length of the well-formed UTF-8 sequence at s[i], or 0 when there is none.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  if (b < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3;
    if (b == 0xE0) lo = 0xA0;  // no overlong forms
    if (b == 0xED) hi = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_sequence(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string valid_utf8(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_sequence(s, i);
    if (n == 0) {
      out += "\uFFFD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string terminal_text(std::string_view s, bool keep_color) {
  auto plain = [](unsigned char c) { return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t'; };
  std::size_t first = 0;
  while (first < s.size() && plain(static_cast<unsigned char>(s[first])))
    ++first;
  if (first == s.size()) return std::string(s);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(s.substr(0, first));
  out.reserve(s.size() + 16);
  for (std::size_t i = first; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (plain(c)) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == 0x1b && keep_color && i + 1 < s.size() && s[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < s.size() && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';'))
        ++j;
      if (j < s.size() && s[j] == 'm') {
        out.append(s.substr(i, j + 1 - i));
        i = j + 1;
        continue;
      }
    }
    std::size_t n = c < 0x80 ? 0 : utf8_sequence(s, i);
    if (n == 0) {  // a C0 control, DEL, or a byte that begins no UTF-8 sequence
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      ++i;
      continue;
    }
    // U+0080–U+009F (C2 80–C2 9F): C1 controls, CSI among them.
    if (n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0) {
      auto code = static_cast<unsigned char>(s[i + 1]);
      out += "\\u00";
      out += hex[code >> 4];
      out += hex[code & 15];
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string metal_label(const std::string& token) {
  std::string t = token;
  if (starts_with(t, "spdisplays_")) t = t.substr(11);
  if (t.empty()) return {};
  if (t == "supported") return "Metal (supported)";
  if (starts_with(t, "metal") && t.size() > 5 && std::isdigit(static_cast<unsigned char>(t[5])))
    return "Metal " + t.substr(5);
  if (starts_with(t, "mtlgpufamilyapple")) return "Metal GPUFamily Apple " + t.substr(17);
  if (starts_with(t, "mtlgpufamilymac")) return "Metal GPUFamily macOS " + t.substr(15);
  if (starts_with(t, "metalfeaturesetfamily") && t.size() == 23)
    return std::string("Metal macOS GPUFamily") + t[21] + " v" + t[22];
  return token;
}

}  // namespace mainboard::core
