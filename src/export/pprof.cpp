// A profile as pprof's profile.proto (github.com/google/pprof, proto/profile.proto), gzipped:
// the format Go's pprof, Grafana Pyroscope, Parca and Google Cloud Profiler read.
//
// The message is written field by field with the protocol buffers' wire format (varints and
// length-delimited fields: all this message needs), the strings interned into its string table.

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/atomic_file.hpp"
#include "core/zlib.hpp"
#include "mainboard/error.hpp"
#include "mainboard/profile.hpp"

namespace mainboard {

namespace {

/// One message being written.
class Message {
 public:
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }
  /// A varint field (wire type 0); zero is the default and left out.
  void number(int field, std::uint64_t v) {
    if (v == 0) return;
    varint(static_cast<std::uint64_t>(field) << 3);
    varint(v);
  }
  void signed_number(int field, std::int64_t v) { number(field, static_cast<std::uint64_t>(v)); }
  /// A length-delimited field (wire type 2): a string, bytes or an embedded message.
  void bytes(int field, std::string_view b) {
    varint((static_cast<std::uint64_t>(field) << 3) | 2);
    varint(b.size());
    out_.append(b);
  }
  void message(int field, const Message& m) { bytes(field, m.out_); }
  /// A packed repeated varint field.
  void packed(int field, const std::vector<std::uint64_t>& v) {
    if (v.empty()) return;
    Message m;
    for (auto x : v)
      m.varint(x);
    bytes(field, m.out_);
  }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

class Strings {
 public:
  Strings() { index(""); }
  std::int64_t index(const std::string& s) {
    auto [it, added] = ids_.emplace(s, static_cast<std::int64_t>(list_.size()));
    if (added) list_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& list() const { return list_; }

 private:
  std::unordered_map<std::string, std::int64_t> ids_;
  std::vector<std::string> list_;
};

Message value_type_of(Strings& s, const char* type, const char* unit) {
  Message m;
  m.signed_number(1, s.index(type));
  m.signed_number(2, s.index(unit));
  return m;
}

/// Functions and locations, each distinct one once.
struct Table {
  Strings& strings;
  std::map<std::pair<std::string, std::string>, std::uint64_t> functions;     // (name, file) → id
  std::map<std::pair<std::uint64_t, std::int64_t>, std::uint64_t> locations;  // (function, line)
  Message body;  // the functions and locations written so far (fields 4 and 5)

  std::uint64_t location(const std::string& name, const std::string& file, std::int64_t line) {
    auto [f, fresh] = functions.emplace(std::pair{name, file}, functions.size() + 1);
    if (fresh) {
      Message m;
      m.number(1, f->second);
      m.signed_number(2, strings.index(name));
      m.signed_number(3, strings.index(name));
      m.signed_number(4, strings.index(file));
      body.message(5, m);
    }
    auto [l, added] = locations.emplace(std::pair{f->second, line}, locations.size() + 1);
    if (added) {
      Message ln;
      ln.number(1, f->second);
      ln.signed_number(2, line);
      Message m;
      m.number(1, l->second);
      m.message(4, ln);
      body.message(4, m);
    }
    return l->second;
  }
};

}  // namespace

std::string Profile::pprof() const {
  Strings strings;
  Table table{strings, {}, {}, {}};
  Message head, samples_out;
  const std::int64_t duration = std::max<std::int64_t>(end_ns - start_ns, 0);
  if (!samples.empty()) {
    // Stack samples: each distinct stack once, with its count and its CPU time at the rate.
    const std::int64_t period = sample_hz ? 1'000'000'000 / sample_hz : 0;
    head.message(1, value_type_of(strings, "samples", "count"));
    head.message(1, value_type_of(strings, "cpu", "nanoseconds"));
    std::vector<std::uint64_t> count(stacks.size());
    for (const auto& s : samples)
      if (s.stack < count.size()) ++count[s.stack];
    std::vector<std::uint64_t> frame_location(frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const auto& f = frames[i];
      // A native frame's file is its source's when debug information says, else its module.
      frame_location[i] = table.location(f.function, f.file.empty() ? f.module : f.file, f.line);
    }
    for (std::size_t i = 0; i < stacks.size(); ++i) {
      if (!count[i]) continue;
      std::vector<std::uint64_t> locs;  // leaf first, as pprof and the profile both keep them
      for (auto f : stacks[i])
        if (f < frame_location.size()) locs.push_back(frame_location[f]);
      Message m;
      m.packed(1, locs);
      m.packed(2, {count[i], count[i] * static_cast<std::uint64_t>(period)});
      samples_out.message(2, m);
    }
    head.message(11, value_type_of(strings, "cpu", "nanoseconds"));
    head.signed_number(12, period);
    head.signed_number(14, strings.index("cpu"));
  } else {
    // Spans: each path a stack of its names, with its calls and the time spent in it itself.
    head.message(1, value_type_of(strings, "calls", "count"));
    head.message(1, value_type_of(strings, "time", "nanoseconds"));
    for (const auto& st : span_stats) {
      if (!st.calls) continue;
      std::vector<std::uint64_t> locs;
      std::size_t from = 0;
      while (from <= st.path.size()) {
        auto slash = st.path.find('/', from);
        if (slash == std::string::npos) slash = st.path.size();
        locs.push_back(table.location(st.path.substr(from, slash - from), "", 0));
        from = slash + 1;
      }
      std::reverse(locs.begin(), locs.end());  // leaf first
      Message m;
      m.packed(1, locs);
      m.packed(2, {st.calls, static_cast<std::uint64_t>(std::max<std::int64_t>(st.self_ns, 0))});
      samples_out.message(2, m);
    }
    head.message(11, value_type_of(strings, "time", "nanoseconds"));
    head.signed_number(12, 1);
    head.signed_number(14, strings.index("time"));
  }
  head.signed_number(10, duration);
  if (clock && clock->realtime_ns)
    head.signed_number(9, clock->realtime_ns + (start_ns - clock->monotonic_ns));
  if (!command.empty()) head.signed_number(13, strings.index("command: " + command));
  if (source) head.signed_number(13, strings.index("from " + *source));

  // Field order does not matter to a reader; the string table must hold every index used.
  std::string raw = head.str() + samples_out.str() + table.body.str();
  Message table_part;
  for (const auto& s : strings.list())
    table_part.bytes(6, s);
  return core::gzip(raw + table_part.str());
}

void Profile::write_pprof(const std::filesystem::path& path) const {
  core::write_file_atomic(path, pprof());
}

}  // namespace mainboard
