// The values of named symbols in one ELF file (its .dynsym and .symtab), read with libelf: where
// a reader of another process finds an interpreter's globals (_PyRuntime, Py_Version).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace mainboard::symbols {

/// Symbols of one ELF file, by name, and the file's first loadable segment address.
struct ElfSymbols {
  std::unordered_map<std::string, std::uint64_t> values;
  std::uint64_t first_load_vaddr = 0;
  bool executable = false;  // ET_EXEC: addresses are absolute
  /// The libraries it names as needed (DT_NEEDED): what the loader maps after exec.
  std::vector<std::string> needed;
  bool ok = false;  // the file was read (a symbol may still be missing)
};

/// The `wanted` symbols defined in `path`; ok is false when it is not a readable ELF file.
ElfSymbols elf_symbols(const std::string& path, const std::vector<std::string>& wanted);

}  // namespace mainboard::symbols
