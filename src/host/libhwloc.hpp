#pragma once

// hwloc, loaded when the topology is first read instead of linked: `mainboard --version`, the
// spans library's users and every command that reads no topology load neither hwloc nor the
// libudev it brings (about 0.9 ms of start-up). The header gives every function's type, so a
// call through the table is checked like a direct one. hwloc.h's inline helpers call the
// library directly, so this table has their two, built on the functions it binds.
#include <hwloc.h>

#include <memory>
#include <string>

#include "core/dynamic_library.hpp"

namespace mainboard::host {

// clang-format off
#define MAINBOARD_HWLOC_FUNCTIONS(X)                                                           \
  X(hwloc_get_api_version) X(hwloc_topology_init) X(hwloc_topology_destroy)                   \
  X(hwloc_topology_set_io_types_filter) X(hwloc_topology_set_icache_types_filter)             \
  X(hwloc_topology_set_xmlbuffer) X(hwloc_topology_load) X(hwloc_topology_export_xmlbuffer)   \
  X(hwloc_free_xmlbuffer) X(hwloc_get_type_depth) X(hwloc_get_nbobjs_by_depth)                \
  X(hwloc_get_obj_by_depth) X(hwloc_bitmap_iszero)
// clang-format on

/// The functions of hwloc this project calls, by their own names.
struct Libhwloc {
  MAINBOARD_HWLOC_FUNCTIONS(MAINBOARD_FUNCTION_SLOT)
  /// Why the library cannot be used (not installed, a function missing, another major ABI);
  /// empty when it can.
  std::string error;
  explicit operator bool() const { return error.empty(); }
  std::shared_ptr<const core::DynamicLibrary> file;

  /// hwloc_get_nbobjs_by_type: objects of a type; 0 when there are none, -1 when they lie at
  /// several depths.
  int nbobjs_by_type(hwloc_topology_t topology, hwloc_obj_type_t type) const;
  /// hwloc_get_obj_by_type: the idx-th object of a type, or null.
  hwloc_obj_t obj_by_type(hwloc_topology_t topology, hwloc_obj_type_t type, unsigned idx) const;
};

/// The process's table, loaded by the first call (any thread) and kept loaded to the end.
const Libhwloc& libhwloc();

/// Loads a table from the given file (tests: a library that is not there, or lacks a function).
Libhwloc load_libhwloc(const std::string& file);

}  // namespace mainboard::host
