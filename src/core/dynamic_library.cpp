#include "core/dynamic_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <exception>
#include <utility>

namespace mainboard::core {

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_) ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  // Closed while an exception unwinds the stack, the library could take the code of that very
  // exception with it (a vendor library written in C++ that let one escape), and whoever catches
  // it would call into unmapped memory: then it stays loaded.
  if (handle_ && std::uncaught_exceptions() == 0) ::dlclose(handle_);
}

DynamicLibrary DynamicLibrary::open(const std::vector<std::string>& candidates,
                                    std::string* error) {
  DynamicLibrary lib;
  std::string errors;
  for (const auto& name : candidates) {
    if (name.empty()) continue;
    void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      if (!errors.empty()) errors += "; ";
      errors += e ? e : name + ": cannot load";
      continue;
    }
    lib.handle_ = h;
    lib.path_ = name;
    link_map* map = nullptr;
    if (::dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
      lib.path_ = map->l_name;
    return lib;
  }
  if (error) *error = errors.empty() ? "no candidate library" : errors;
  return lib;
}

void* DynamicLibrary::raw_symbol(const char* name) const {
  if (!handle_) return nullptr;
  return ::dlsym(handle_, name);
}

}  // namespace mainboard::core
