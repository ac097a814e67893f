#pragma once

#include <string>

namespace mainboard::symbols {

/// "_Z10copyKernelPfPKfm" → "copyKernel(float*, float const*, unsigned long)"; anything that is
/// not a mangled name comes back unchanged, and null or empty as "(unnamed)".
std::string demangle(const char* name);

}  // namespace mainboard::symbols
