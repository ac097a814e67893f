#pragma once
// The Prometheus text exposition format (version 0.0.4) and OpenMetrics 1.0: metric families,
// each with HELP and TYPE, their samples with escaped labels, numbers as Prometheus parses them.

#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mainboard::serve {

enum class Format { prometheus, openmetrics };

/// The Content-Type header each format is served with.
const char* content_type(Format format);

/// The format a scraper asks for in its Accept header: OpenMetrics when it names
/// application/openmetrics-text, the Prometheus text format otherwise.
Format negotiate(std::string_view accept);

using Labels = std::vector<std::pair<std::string, std::string>>;

/// One metric family: a name, a type, a help text and its samples.
class Family {
 public:
  Family(std::string name, std::string type, std::string help)
      : name_(std::move(name)), type_(std::move(type)), help_(std::move(help)) {}
  Family& add(const Labels& labels, double value) {
    samples_.emplace_back(labels, value);
    return *this;
  }
  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  std::size_t size() const { return samples_.size(); }
  void write(std::string& out, Format format) const;

 private:
  std::string name_;
  std::string type_;
  std::string help_;
  std::vector<std::pair<Labels, double>> samples_;
};

/// A whole exposition. Families keep the order they were first declared in; declaring one
/// again (a loop over GPUs) returns the same family. Families without samples are left out.
class Exposition {
 public:
  /// A counter's name ends in _total (the sample name in both formats; OpenMetrics names the
  /// family without it).
  Family& counter(const std::string& name, const std::string& help);
  Family& gauge(const std::string& name, const std::string& help);
  /// The whole text; `end` false leaves out OpenMetrics' closing "# EOF" (for text that more
  /// families follow).
  std::string text(Format format, bool end = true) const;

 private:
  Family& declare(const std::string& name, const char* type, const std::string& help);
  std::deque<Family> families_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

/// A sample value as both formats write it: integers without a fraction, NaN, +Inf, -Inf.
std::string format_value(double value);

/// A label value with backslash, double quote and newline escaped.
std::string escape_label(std::string_view value);

}  // namespace mainboard::serve
