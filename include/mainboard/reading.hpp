#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "mainboard/error.hpp"
#include "mainboard/export.hpp"

namespace mainboard {

/// How a probe or a reading fared: taken; not offered by this platform, driver or permission
/// (unsupported); or offered but it went wrong (failed).
enum class ProbeStatus { ok, unsupported, failed };
MAINBOARD_API const char* to_string(ProbeStatus status);

/// Why a reading is not there: its status (unsupported or failed) and the reason in words.
struct MAINBOARD_API Unavailable {
  ProbeStatus status = ProbeStatus::unsupported;
  std::string reason;
  bool operator==(const Unavailable&) const = default;
};

/// A reading that was either taken (a `T`) or not (why not: an Unavailable). The one way the
/// models say a reading is missing: `if (r) use(r->field); else explain(r.unavailable()->reason)`.
/// Default-constructed, it is unsupported with no reason: not read. In JSON it is the reading's
/// own object, or `{"unavailable": {"status": …, "reason": …}}`.
template <class T>
class Reading {
 public:
  using value_type = T;

  Reading() : v_(Unavailable{}) {}
  Reading(T value) : v_(std::move(value)) {}        // NOLINT: a reading converts to one taken
  Reading(Unavailable why) : v_(std::move(why)) {}  // NOLINT: and so does why it is not

  /// Not taken: `status` (unsupported or failed) and `reason`.
  static Reading none(std::string reason, ProbeStatus status = ProbeStatus::unsupported) {
    return Unavailable{status, std::move(reason)};
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  /// The reading; throws mainboard::Error with the reason when there is none.
  const T& value() const {
    if (auto* v = std::get_if<T>(&v_)) return *v;
    throw Error("reading unavailable: " + std::get<Unavailable>(v_).reason);
  }
  T& value() {
    if (auto* v = std::get_if<T>(&v_)) return *v;
    throw Error("reading unavailable: " + std::get<Unavailable>(v_).reason);
  }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const T& operator*() const { return value(); }
  T& operator*() { return value(); }
  /// The reading, or an empty one (every optional field unset) where there is none: for a
  /// reader that shows what it finds and nothing else.
  const T& or_empty() const {
    static const T empty{};
    auto* v = std::get_if<T>(&v_);
    return v ? *v : empty;
  }
  /// The reading, or `fallback` where there is none.
  T value_or(T fallback) const { return ok() ? std::get<T>(v_) : std::move(fallback); }

  /// Why there is no reading; null when there is one.
  const Unavailable* unavailable() const { return std::get_if<Unavailable>(&v_); }
  /// The reason there is no reading; empty when there is one.
  const std::string& reason() const {
    static const std::string none;
    auto* u = unavailable();
    return u ? u->reason : none;
  }

  bool operator==(const Reading&) const = default;

 private:
  std::variant<Unavailable, T> v_;
};

template <class T>
struct is_reading : std::false_type {};
template <class T>
struct is_reading<Reading<T>> : std::true_type {};

}  // namespace mainboard
