#pragma once

#include <cxxabi.h>
#include <array>
#include <concepts>
#include <cstdlib>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/reading.hpp"
#include "model/enum_names.hpp"

/// The machinery behind every model's to_json/from_json: a model lists its fields once, in a
/// `fields(visitor, model)` function, and the same list writes and reads it. Loading ignores
/// unknown keys, treats a missing std::optional as empty, and throws mainboard::Error naming
/// the model and field for anything else missing or of the wrong type — except inside a
/// machine snapshot (AdditiveReading).
namespace mainboard::json_detail {

/// While a machine snapshot is read. Its schema grows by adding fields within one
/// schema_version, and snapshots outlive builds (saved files, the nodes of a fleet running
/// different releases): a field a snapshot from an earlier build lacks keeps its default rather
/// than failing the whole snapshot. A value of the wrong type still fails.
inline thread_local int g_additive_reading = 0;
struct AdditiveReading {
  AdditiveReading() { ++g_additive_reading; }
  ~AdditiveReading() { --g_additive_reading; }
  AdditiveReading(const AdditiveReading&) = delete;
  AdditiveReading& operator=(const AdditiveReading&) = delete;
};

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

template <class T>
struct is_array : std::false_type {};
template <class T, std::size_t N>
struct is_array<std::array<T, N>> : std::true_type {};

template <class T>
struct is_string_map : std::false_type {};
template <class V, class C, class A>
struct is_string_map<std::map<std::string, V, C, A>> : std::true_type {};

template <class T>
void put(nlohmann::json& j, const T& value) {
  if constexpr (is_optional<T>::value) {
    if (value)
      put(j, *value);
    else
      j = nullptr;
  } else if constexpr (is_reading<T>::value) {
    // The reading's own object, or why there is none in its place.
    if (auto* why = value.unavailable()) {
      j = nlohmann::json::object();
      auto& u = j["unavailable"];
      put(u["status"], why->status);
      put(u["reason"], why->reason);
    } else {
      put(j, *value);
    }
  } else if constexpr (is_vector<T>::value || is_array<T>::value) {
    j = nlohmann::json::array();
    for (const auto& item : value) {
      nlohmann::json e;
      put(e, item);
      j.push_back(std::move(e));
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    // What the machine says is not always UTF-8 (a host name, a DIMM's part number, a variable
    // set by a script) and JSON text must be: a bad byte becomes U+FFFD here, once, for every
    // output and for Python, rather than failing the snapshot where it is written.
    j = core::valid_utf8(value);
  } else if constexpr (is_string_map<T>::value) {
    j = nlohmann::json::object();
    for (const auto& [key, item] : value)
      put(j[core::valid_utf8(key)], item);
  } else {
    j = value;
  }
}

[[noreturn]] inline void fail(const char* model, const std::string& field,
                              const std::string& what) {
  throw Error(std::string(model) + "." + field + ": " + what);
}

template <class T>
void take(const nlohmann::json& j, T& out, const char* model, const std::string& field) {
  if constexpr (is_optional<T>::value) {
    if (j.is_null()) {
      out.reset();
      return;
    }
    typename T::value_type v{};
    take(j, v, model, field);
    out = std::move(v);
  } else if constexpr (is_reading<T>::value) {
    // {"unavailable": {"status", "reason"}}; a document of schema 1 said
    // {"supported": false, "reason": …} in the reading's own object.
    if (j.is_object()) {
      if (auto u = j.find("unavailable"); u != j.end()) {
        if (!u->is_object()) fail(model, field + ".unavailable", "expected an object");
        Unavailable why;
        if (auto s = u->find("status"); s != u->end())
          take(*s, why.status, model, field + ".unavailable.status");
        if (auto r = u->find("reason"); r != u->end())
          take(*r, why.reason, model, field + ".unavailable.reason");
        if (why.status == ProbeStatus::ok)
          fail(model, field + ".unavailable.status", "an unavailable reading cannot be ok");
        out = std::move(why);
        return;
      }
      if (auto s = j.find("supported"); s != j.end() && s->is_boolean() && !s->get<bool>()) {
        Unavailable why;
        if (auto r = j.find("reason"); r != j.end() && r->is_string()) why.reason = *r;
        out = std::move(why);
        return;
      }
    }
    typename T::value_type v{};
    take(j, v, model, field);
    out = std::move(v);
  } else if constexpr (is_vector<T>::value) {
    if (!j.is_array()) fail(model, field, "expected an array");
    out.clear();
    out.reserve(j.size());
    std::size_t i = 0;
    for (const auto& e : j) {
      typename T::value_type v{};
      take(e, v, model, field + "[" + std::to_string(i++) + "]");
      out.push_back(std::move(v));
    }
  } else if constexpr (is_array<T>::value) {
    if (!j.is_array() || j.size() != out.size())
      fail(model, field, "expected an array of " + std::to_string(out.size()));
    for (std::size_t i = 0; i < out.size(); ++i)
      take(j[i], out[i], model, field + "[" + std::to_string(i) + "]");
  } else if constexpr (is_string_map<T>::value) {
    if (!j.is_object()) fail(model, field, "expected an object");
    out.clear();
    for (const auto& [key, value] : j.items()) {
      typename T::mapped_type v{};
      take(value, v, model, field + "." + key);
      out.emplace(key, std::move(v));
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) fail(model, field, "expected true or false");
    out = j.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!j.is_number_integer()) fail(model, field, "expected an integer");
    // Range-checked: a hostile file must not wrap a count into something huge.
    if (j.is_number_unsigned()) {
      auto v = j.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
        fail(model, field, "integer out of range");
      out = static_cast<T>(v);
    } else {
      auto v = j.get<std::int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        if (v < 0) fail(model, field, "expected a non-negative integer");
        if (static_cast<std::uint64_t>(v) >
            static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
          fail(model, field, "integer out of range");
      } else {
        if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
            v > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
          fail(model, field, "integer out of range");
      }
      out = static_cast<T>(v);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) fail(model, field, "expected a number");
    out = j.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) fail(model, field, "expected a string");
    out = j.get<std::string>();
  } else {
    // A nested model or an enum: its own from_json reports problems inside it.
    try {
      from_json(j, out);
    } catch (const Error& e) {
      throw Error(std::string(model) + "." + field + " → " + e.what());
    } catch (const nlohmann::json::exception& e) {
      fail(model, field, e.what());
    }
  }
}

/// The model's type name without its namespace, for error messages ("Pressure.cpu: ...").
template <class T>
std::string model_name() {
  int status = 0;
  char* raw = abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status);
  std::string name = status == 0 && raw ? raw : typeid(T).name();
  std::free(raw);
  if (auto colon = name.rfind("::"); colon != std::string::npos) name.erase(0, colon + 2);
  return name;
}

struct Writer {
  nlohmann::json& j;
  template <class T>
  void operator()(const char* key, const T& value) {
    put(j[key], value);
  }
};

struct Reader {
  const nlohmann::json& j;
  const char* model;
  template <class T>
  void operator()(const char* key, T& value) {
    auto it = j.find(key);
    if (it == j.end()) {
      if constexpr (is_optional<T>::value) {
        value.reset();
        return;
      } else {
        if (g_additive_reading > 0) return;  // the model's default stands
        fail(model, key, "missing");
      }
    }
    take(*it, value, model, key);
  }
};

template <class Model>
void write_model(nlohmann::json& j, const Model& m) {
  j = nlohmann::json::object();
  Writer w{j};
  fields(w, const_cast<Model&>(m));
}

template <class Model>
void read_model(const nlohmann::json& j, Model& m, const char* name) {
  if (!j.is_object()) throw Error(std::string(name) + ": expected an object");
  Reader r{j, name};
  fields(r, m);
}

}  // namespace mainboard::json_detail

namespace mainboard {

/// A model that lists its fields beside itself, in its public header, and says so there with
/// `constexpr bool json_fields_beside(const Model*) { return true; }`, converts here without a
/// line of its own: inside a snapshot, a new probe's model needs nothing more. The opt-in keeps
/// the answer the same in every file (a `fields` list in json.cpp is seen there only). Users
/// convert a model on its own through MAINBOARD_DECLARE_JSON/MAINBOARD_DEFINE_JSON.
template <class T>
concept ListsFields = requires(json_detail::Writer& w, T& m) {
  { json_fields_beside(static_cast<const T*>(nullptr)) } -> std::same_as<bool>;
  fields(w, m);
};

template <ListsFields T>
void to_json(nlohmann::json& j, const T& value) {
  json_detail::write_model(j, value);
}

template <ListsFields T>
void from_json(const nlohmann::json& j, T& value) {
  json_detail::read_model(j, value, json_detail::model_name<T>().c_str());
}

}  // namespace mainboard

/// Defines to_json/from_json for a model whose field list is `fields(v, m)`.
#define MAINBOARD_DEFINE_JSON(Type)                      \
  void to_json(nlohmann::json& j, const Type& value) {   \
    json_detail::write_model(j, value);                  \
  }                                                      \
  void from_json(const nlohmann::json& j, Type& value) { \
    json_detail::read_model(j, value, #Type);            \
  }

/// A Reading of a model: the model's object, or {"unavailable": {"status", "reason"}}.
#define MAINBOARD_DEFINE_READING_JSON(Type)                       \
  void to_json(nlohmann::json& j, const Reading<Type>& value) {   \
    json_detail::put(j, value);                                   \
  }                                                               \
  void from_json(const nlohmann::json& j, Reading<Type>& value) { \
    json_detail::take(j, value, #Type, "");                       \
  }

/// Enums travel as their names (model/enum_names.hpp); an unknown name is an error, not a
/// silent default.
#define MAINBOARD_DEFINE_ENUM_JSON(Type)                              \
  void to_json(nlohmann::json& j, const Type& value) {                \
    j = detail::name_of(value);                                       \
  }                                                                   \
  void from_json(const nlohmann::json& j, Type& value) {              \
    if (!j.is_string()) throw Error(#Type ": expected a string");     \
    const auto name = j.get<std::string>();                           \
    if (auto v = detail::value_of<Type>(name)) {                      \
      value = *v;                                                     \
      return;                                                         \
    }                                                                 \
    throw Error(std::string(#Type ": unknown value '") + name + "'"); \
  }
