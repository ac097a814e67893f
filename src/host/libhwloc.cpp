#include "host/libhwloc.hpp"

namespace mainboard::host {

Libhwloc load_libhwloc(const std::string& file) {
  Libhwloc table;
  std::string error;
  auto lib = std::make_shared<core::DynamicLibrary>(core::DynamicLibrary::open({file}, &error));
  if (!*lib) {
    table.error = file + " not loaded (" + error + ")";
    return table;
  }
  std::string missing;
#define MAINBOARD_BIND_HWLOC(name) core::bind_function(*lib, table.name, #name, missing);
  MAINBOARD_HWLOC_FUNCTIONS(MAINBOARD_BIND_HWLOC)
#undef MAINBOARD_BIND_HWLOC
  table.file = lib;
  if (!missing.empty()) {
    table.error = lib->path() + " lacks " + missing;
    return table;
  }
  // The structures read here (objects, their attributes) are those of the major version the
  // headers describe: another one would be read wrongly, not merely fail.
  unsigned version = table.hwloc_get_api_version();
  if ((version >> 16) != (HWLOC_API_VERSION >> 16))
    table.error = lib->path() + " is hwloc API " + std::to_string(version >> 16) + ".x, not " +
                  std::to_string(HWLOC_API_VERSION >> 16) + ".x";
  return table;
}

int Libhwloc::nbobjs_by_type(hwloc_topology_t topology, hwloc_obj_type_t type) const {
  int depth = hwloc_get_type_depth(topology, type);
  if (depth == HWLOC_TYPE_DEPTH_UNKNOWN) return 0;
  if (depth == HWLOC_TYPE_DEPTH_MULTIPLE) return -1;
  return static_cast<int>(hwloc_get_nbobjs_by_depth(topology, depth));
}

hwloc_obj_t Libhwloc::obj_by_type(hwloc_topology_t topology, hwloc_obj_type_t type,
                                  unsigned idx) const {
  int depth = hwloc_get_type_depth(topology, type);
  if (depth == HWLOC_TYPE_DEPTH_UNKNOWN || depth == HWLOC_TYPE_DEPTH_MULTIPLE) return nullptr;
  return hwloc_get_obj_by_depth(topology, depth, idx);
}

const Libhwloc& libhwloc() {
  // Never closed: another thread may still hold a topology while the process exits.
  static const Libhwloc& table = *new Libhwloc(load_libhwloc("libhwloc.so.15"));
  return table;
}

}  // namespace mainboard::host
