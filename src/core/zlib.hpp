#pragma once

// zlib, loaded with dlopen when a gzipped file is first read or a pprof profile first written:
// the command starts without it (tests/e2e/spans_only_test.cpp holds it to that).

#include <zlib.h>

#include <string>
#include <string_view>

#include "core/dynamic_library.hpp"

namespace mainboard::core {

struct Zlib {
  MAINBOARD_FUNCTION_SLOT(gzopen)
  MAINBOARD_FUNCTION_SLOT(gzbuffer)
  MAINBOARD_FUNCTION_SLOT(gzread)
  MAINBOARD_FUNCTION_SLOT(gzerror)
  MAINBOARD_FUNCTION_SLOT(gzclose)
  MAINBOARD_FUNCTION_SLOT(deflateInit2_)
  MAINBOARD_FUNCTION_SLOT(deflateBound)
  MAINBOARD_FUNCTION_SLOT(deflate)
  MAINBOARD_FUNCTION_SLOT(deflateEnd)
  /// deflateInit2, whose macro passes the header's version and the stream's size.
  int deflate_init(z_stream* z, int level, int window_bits) const {
    return deflateInit2_(z, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                         static_cast<int>(sizeof(z_stream)));
  }
};

/// `raw` compressed with a gzip header and trailer (what `gzip` writes). Throws mainboard::Error
/// when zlib cannot be loaded or fails.
std::string gzip(std::string_view raw);

/// The table, loaded on first use (libz.so.1). Throws mainboard::Error saying why when zlib
/// cannot be loaded or lacks a function.
const Zlib& zlib();

}  // namespace mainboard::core
