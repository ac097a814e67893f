#include "core/zlib.hpp"

#include <memory>
#include <mutex>

#include "mainboard/error.hpp"

namespace mainboard::core {

namespace {

struct Loaded {
  DynamicLibrary lib;
  Zlib table;
  std::string error;  ///< why zlib is not there; empty when it is
};

Loaded load() {
  Loaded l;
  std::string why;
  l.lib = DynamicLibrary::open({"libz.so.1", "libz.so"}, &why);
  if (!l.lib) {
    l.error = "zlib (libz.so.1) could not be loaded: " + why;
    return l;
  }
  std::string missing;
  auto& t = l.table;
  bind_function(l.lib, t.gzopen, "gzopen", missing);
  bind_function(l.lib, t.gzbuffer, "gzbuffer", missing);
  bind_function(l.lib, t.gzread, "gzread", missing);
  bind_function(l.lib, t.gzerror, "gzerror", missing);
  bind_function(l.lib, t.gzclose, "gzclose", missing);
  bind_function(l.lib, t.deflateInit2_, "deflateInit2_", missing);
  bind_function(l.lib, t.deflateBound, "deflateBound", missing);
  bind_function(l.lib, t.deflate, "deflate", missing);
  bind_function(l.lib, t.deflateEnd, "deflateEnd", missing);
  if (!missing.empty()) l.error = l.lib.path() + " lacks " + missing;
  return l;
}

}  // namespace

const Zlib& zlib() {
  static const Loaded loaded = load();  // once, thread-safe
  if (!loaded.error.empty()) throw Error(loaded.error);
  return loaded.table;
}

}  // namespace mainboard::core
