#include "cli/common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/atomic_file.hpp"
#include "core/text.hpp"

namespace mainboard::cli {

Machine::Options machine_options(const Global& g) {
  Machine::Options o;
  o.sysroot = g.sysroot;
  o.toolchain_cache = !g.no_cache;
  return o;
}

std::string Help::make_option_opts(const CLI::Option* opt) const {
  if (opt->get_type_size() == 0) return "";  // a flag
  std::string type = opt->get_type_name();
  if (auto colon = type.find(':'); colon != std::string::npos) type.resize(colon);
  return type.empty() ? "" : " " + type;
}

std::string Help::make_option_desc(const CLI::Option* opt) const {
  std::string d = opt->get_description();
  if (!opt->get_default_str().empty()) d += " (default: " + opt->get_default_str() + ")";
  return d;
}

CLI::Validator number(double low, double high, bool above) {
  auto show = [](double v) { return fmt::format("{:g}", v); };
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size()) return "'" + text + "' is not a number";
        if (above && !(v > low)) return text + " is not above " + show(low);
        if (!above && v < low) return text + " is below " + show(low);
        if (v > high) return text + " is above " + show(high);
        return "";
      },
      "", "number");
}

CLI::Validator one_of(std::vector<std::string> names) {
  return CLI::Validator(
      [names](std::string& text) -> std::string {
        if (std::find(names.begin(), names.end(), text) != names.end()) return "";
        std::string all;
        for (const auto& n : names)
          all += (all.empty() ? "" : ", ") + n;
        return "'" + text + "' is not one of " + all;
      },
      "", "one of");
}

namespace {
int g_first_write_errno = 0;
}  // namespace

void write_out(const char* data, std::size_t size, std::FILE* to) {
  errno = 0;
  if (std::fwrite(data, 1, size, to) < size && g_first_write_errno == 0)
    g_first_write_errno = errno ? errno : EIO;
}

int first_write_errno() {
  return g_first_write_errno;
}

void print(const std::string& text, bool color, std::FILE* to) {
  std::string shown = core::terminal_text(text, color);
  write_out(shown.data(), shown.size(), to);
}

std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

/// nlohmann's serializer writing to a stdio stream through a buffer of its own: a snapshot's
/// text (about 16 KB) was made whole first, in a string doubled six times on its way, and the
/// heap pages that took were a tenth of the command's page faults.
class StreamOutput final : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  explicit StreamOutput(std::FILE* to) : to_(to) {}
  StreamOutput(const StreamOutput&) = delete;
  StreamOutput& operator=(const StreamOutput&) = delete;
  ~StreamOutput() override { flush(); }
  void write_character(char c) override {
    if (used_ == sizeof buffer_) flush();
    buffer_[used_++] = c;
  }
  void write_characters(const char* s, std::size_t n) override {
    if (n > sizeof buffer_ - used_) flush();
    if (n > sizeof buffer_) {
      write_out(s, n, to_);
      return;
    }
    std::memcpy(buffer_ + used_, s, n);
    used_ += n;
  }
  void flush() {
    if (used_) write_out(buffer_, used_, to_);
    used_ = 0;
  }

 private:
  std::FILE* to_;
  char buffer_[4096];
  std::size_t used_ = 0;
};

}  // namespace

void print_json(const nlohmann::json& j, std::FILE* to) {
  auto out = std::make_shared<StreamOutput>(to);
  nlohmann::detail::serializer<nlohmann::json> serializer(out, ' ',
                                                          nlohmann::json::error_handler_t::replace);
  serializer.dump(j, true, false, 2);
  out->write_character('\n');
  out->flush();
}

void emit_json(const nlohmann::json& j, const std::string& output) {
  if (output.empty())
    print_json(j);
  else
    core::write_file_atomic(output, json_text(j));
}

std::string check_outputs(const std::vector<std::pair<const char*, std::string>>& outputs) {
  for (const auto& [option, path] : outputs)
    if (auto why = core::why_unwritable(path); !why.empty())
      return std::string(option) + " " + path + ": " + why;
  return "";
}

std::string check_outputs_are_not_inputs(
    const std::vector<std::pair<const char*, std::string>>& outputs,
    const std::vector<std::string>& inputs) {
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    for (const auto& input : inputs)
      if (core::same_file(path, input))
        return std::string(option) + " " + path + ": is the input " + input +
               " (the same file); it would be written over while it is read";
  }
  return "";
}

bool write_or_fall_back(const std::string& path, const char* what,
                        const std::function<void(const std::string&)>& write) {
  try {
    write(path);
    return true;
  } catch (const std::exception& e) {
    std::string fallback;
    try {
      fallback = core::make_fallback_file(path).string();
      write(fallback);
      print(
          fmt::format("mainboard: error: {}; the {} is in {} instead\n", e.what(), what, fallback),
          false, stderr);
    } catch (const std::exception& again) {
      // Our own file, made with O_EXCL in a directory where no one else may remove it.
      if (!fallback.empty()) std::remove(fallback.c_str());
      print(fmt::format("mainboard: error: {}; and {}\n", e.what(), again.what()), false, stderr);
    }
    return false;
  }
}

std::vector<int> interrupt_signals() {
  return {SIGINT, SIGTERM, SIGHUP};
}

}  // namespace mainboard::cli
