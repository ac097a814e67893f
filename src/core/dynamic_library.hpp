#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace mainboard::core {

/// A vendor library loaded at run time with dlopen (never linked). Symbols are looked up by
/// name; a missing one is an empty result, so the readings that need it become unsupported.
class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  /// Opens the first candidate that loads (RTLD_NOW | RTLD_LOCAL). `error` describes every
  /// failed attempt when none loads.
  static DynamicLibrary open(const std::vector<std::string>& candidates,
                             std::string* error = nullptr);

  bool loaded() const { return handle_ != nullptr; }
  explicit operator bool() const { return loaded(); }
  /// The file that was loaded, as resolved by the dynamic linker when it can say.
  const std::string& path() const { return path_; }

  void* raw_symbol(const char* name) const;
  template <class Fn>
  Fn* symbol(const char* name) const {
    return reinterpret_cast<Fn*>(raw_symbol(name));
  }
  /// The first of several versioned names that exists (newest first: `_v3`, `_v2`, plain).
  template <class Fn>
  Fn* first_symbol(std::initializer_list<const char*> names, const char** found = nullptr) const {
    for (const char* name : names) {
      if (auto* p = raw_symbol(name)) {
        if (found) *found = name;
        return reinterpret_cast<Fn*>(p);
      }
    }
    return nullptr;
  }

 private:
  void* handle_ = nullptr;
  std::string path_;
};

/// Points `slot` at the function `name` of `lib`, typed from its header's declaration; a name
/// the library lacks is added to `missing` (comma-separated) and the slot left null.
template <class Fn>
void bind_function(const DynamicLibrary& lib, Fn*& slot, const char* name, std::string& missing) {
  slot = lib.symbol<Fn>(name);
  if (!slot) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

}  // namespace mainboard::core

/// A member of a table of functions loaded at run time, of the type its header declares:
/// `MAINBOARD_FUNCTION_SLOT(dwfl_begin)` is `decltype(&::dwfl_begin) dwfl_begin = nullptr;`.
#define MAINBOARD_FUNCTION_SLOT(name) decltype(&::name) name = nullptr;
