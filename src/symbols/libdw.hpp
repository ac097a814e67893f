#pragma once

// elfutils, loaded when first needed instead of linked: a command that never names a frame
// (`--version`, `snapshot`, `check`) and `import mainboard` load neither libdw and libelf nor
// the compression libraries they bring (zlib, liblzma, libbz2): about 1 ms of start-up each.
// The headers give every function's type, so a call through the table is checked like a direct
// one.
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include <memory>
#include <mutex>
#include <string>

#include "core/dynamic_library.hpp"

namespace mainboard::symbols {

// clang-format off
#define MAINBOARD_LIBELF_FUNCTIONS(X)                                                          \
  X(elf_version) X(elf_begin) X(elf_end) X(elf_getphdrnum) X(elf_nextscn) X(elf_getdata)      \
  X(elf_strptr) X(gelf_getehdr) X(gelf_getphdr) X(gelf_getshdr) X(gelf_getsym) X(gelf_getdyn)
#define MAINBOARD_LIBDW_FUNCTIONS(X)                                                           \
  X(dwfl_begin) X(dwfl_end) X(dwfl_errmsg) X(dwfl_report_begin) X(dwfl_report_end)            \
  X(dwfl_linux_proc_find_elf) X(dwfl_standard_find_debuginfo) X(dwfl_linux_proc_maps_report)  \
  X(dwfl_linux_proc_report) X(dwfl_linux_proc_attach) X(dwfl_addrmodule) X(dwfl_module_info)  \
  X(dwfl_module_addrinfo) X(dwfl_module_getsrc) X(dwfl_lineinfo) X(dwfl_module_addrdie)       \
  X(dwfl_attach_state) X(dwfl_thread_state_registers) X(dwfl_thread_state_register_pc)        \
  X(dwfl_thread_tid) X(dwfl_frame_pc) X(dwfl_getthreads) X(dwfl_thread_getframes)             \
  X(dwfl_getthread_frames) X(dwarf_attr) X(dwarf_attr_integrate) X(dwarf_formstring)          \
  X(dwarf_formudata) X(dwarf_tag) X(dwarf_getscopes) X(dwarf_getsrcfiles) X(dwarf_filesrc)       \
  X(dwfl_build_id_find_debuginfo) X(dwfl_module_build_id) X(dwelf_elf_gnu_build_id)
// clang-format on

/// The functions of libdw and libelf this project calls, by their own names.
struct Libdw {
  MAINBOARD_LIBELF_FUNCTIONS(MAINBOARD_FUNCTION_SLOT)
  MAINBOARD_LIBDW_FUNCTIONS(MAINBOARD_FUNCTION_SLOT)
  /// Why the libraries could not be used (not installed, a function missing); empty when every
  /// slot is filled.
  std::string error;
  explicit operator bool() const { return error.empty(); }
  /// The loaded files, closed with the last copy of the table.
  std::shared_ptr<const core::DynamicLibrary> libdw_file, libelf_file;
};

/// The process's table, loaded by the first call (any thread) and kept loaded to the end.
const Libdw& libdw();

/// Held around every use of elfutils by the sampler's threads: the unwinder on the one that
/// drains the perf buffers, the symbols of a Python interpreter read on the one that reads its
/// stacks. libelf as distributions build it has no locks of its own, and since stacks are unwound
/// as they arrive by default, both run at once. Recursive: an unwinder builds its modules inside.
std::recursive_mutex& elfutils_mutex();

/// Loads a table from the given files (tests: a library that is not there, or lacks a
/// function).
Libdw load_libdw(const std::string& libdw_file, const std::string& libelf_file);

}  // namespace mainboard::symbols
