#include "symbols/demangle.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace mainboard::symbols {

std::string demangle(const char* name) {
  if (!name || !*name) return "(unnamed)";
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

}  // namespace mainboard::symbols
