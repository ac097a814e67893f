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

std::string gzip(std::string_view raw) {
  const auto& zl = zlib();
  z_stream z{};
  // 15 + 16: a gzip header and trailer around the deflate stream.
  if (zl.deflate_init(&z, Z_DEFAULT_COMPRESSION, 15 + 16) != Z_OK)
    throw Error("zlib could not start compressing");
  std::string out(zl.deflateBound(&z, raw.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = zl.deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  zl.deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error("zlib could not compress");
  return out;
}

}  // namespace mainboard::core
