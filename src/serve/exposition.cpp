#include "serve/exposition.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace mainboard::serve {

const char* content_type(Format format) {
  return format == Format::openmetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

Format negotiate(std::string_view accept) {
  return accept.find("application/openmetrics-text") != std::string_view::npos ? Format::openmetrics
                                                                               : Format::prometheus;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Whole numbers up to 2^53 are exact in a double: written without a fraction or exponent.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0)
    return fmt::format("{}", static_cast<long long>(value));
  return fmt::format("{}", value);  // the shortest text that reads back as the same double
}

std::string escape_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

namespace {

std::string escape_help(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

}  // namespace

void Family::write(std::string& out, Format format) const {
  // OpenMetrics names a counter's family without the _total its samples carry.
  std::string family = name_;
  if (format == Format::openmetrics && type_ == "counter" && family.ends_with("_total"))
    family.resize(family.size() - 6);
  if (format == Format::openmetrics) {
    out += fmt::format("# TYPE {} {}\n# HELP {} {}\n", family, type_, family, escape_help(help_));
  } else {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family, escape_help(help_), family, type_);
  }
  for (const auto& [labels, value] : samples_) {
    out += name_;
    if (!labels.empty()) {
      out += '{';
      bool first = true;
      for (const auto& [key, text] : labels) {
        if (!first) out += ',';
        first = false;
        out += key;
        out += "=\"";
        out += escape_label(text);
        out += '"';
      }
      out += '}';
    }
    out += ' ';
    out += format_value(value);
    out += '\n';
  }
}

Family& Exposition::declare(const std::string& name, const char* type, const std::string& help) {
  if (auto it = index_.find(name); it != index_.end()) {
    Family& f = families_[it->second];
    if (f.type() != type) throw std::logic_error("metric " + name + " declared with two types");
    return f;
  }
  index_.emplace(name, families_.size());
  return families_.emplace_back(name, type, help);
}

Family& Exposition::counter(const std::string& name, const std::string& help) {
  if (!name.ends_with("_total")) throw std::logic_error("counter " + name + " must end in _total");
  return declare(name, "counter", help);
}

Family& Exposition::gauge(const std::string& name, const std::string& help) {
  return declare(name, "gauge", help);
}

std::string Exposition::text(Format format, bool end) const {
  std::string out;
  out.reserve(families_.size() * 256);
  for (const auto& f : families_)
    if (f.size()) f.write(out, format);
  if (end && format == Format::openmetrics) out += "# EOF\n";
  return out;
}

}  // namespace mainboard::serve
