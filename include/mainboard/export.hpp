#pragma once

/// Marks what the shared libraries export. Both libraries build with hidden visibility, so only
/// declarations carrying MAINBOARD_API (the public API) appear in their dynamic symbol tables;
/// internal code stays private to each library and cannot clash with a host program's symbols.
#if defined(__GNUC__) || defined(__clang__)
#define MAINBOARD_API __attribute__((visibility("default")))
#else
#define MAINBOARD_API
#endif
