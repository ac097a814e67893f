#include "symbols/libdw.hpp"

namespace mainboard::symbols {

Libdw load_libdw(const std::string& libdw_file, const std::string& libelf_file) {
  Libdw table;
  std::string error;
  auto elf =
      std::make_shared<core::DynamicLibrary>(core::DynamicLibrary::open({libelf_file}, &error));
  if (!*elf) {
    table.error = libelf_file + " not loaded (" + error + ")";
    return table;
  }
  auto dw =
      std::make_shared<core::DynamicLibrary>(core::DynamicLibrary::open({libdw_file}, &error));
  if (!*dw) {
    table.error = libdw_file + " not loaded (" + error + ")";
    return table;
  }
  std::string missing;
#define MAINBOARD_BIND_ELF(name) core::bind_function(*elf, table.name, #name, missing);
#define MAINBOARD_BIND_DW(name) core::bind_function(*dw, table.name, #name, missing);
  MAINBOARD_LIBELF_FUNCTIONS(MAINBOARD_BIND_ELF)
  MAINBOARD_LIBDW_FUNCTIONS(MAINBOARD_BIND_DW)
#undef MAINBOARD_BIND_ELF
#undef MAINBOARD_BIND_DW
  table.libelf_file = elf;
  table.libdw_file = dw;
  if (!missing.empty()) table.error = dw->path() + " or " + elf->path() + " lacks " + missing;
  return table;
}

std::recursive_mutex& elfutils_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

const Libdw& libdw() {
  // Never closed: a thread may still be naming frames while the process exits.
  static const Libdw& table = *new Libdw(load_libdw("libdw.so.1", "libelf.so.1"));
  return table;
}

}  // namespace mainboard::symbols
