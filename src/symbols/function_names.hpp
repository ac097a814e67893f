#pragma once

#include "mainboard/profile.hpp"

namespace mainboard::symbols {

/// Names the functions of auto-instrumented spans: every "@0x<address>" component of the span
/// paths becomes the function at that address, read from the modules that
/// Profile::function_maps lists (the recording process's mappings). Placeholders it cannot name
/// stay as they are; function_maps is emptied once every one is named.
void name_functions(Profile& p);

}  // namespace mainboard::symbols
