#pragma once

#include "mainboard/export.hpp"
#include "mainboard/profile.hpp"

namespace mainboard::detail {

/// Applied to every profile Profile::parse (and so load) reads. mainboard::mainboard installs the
/// naming of auto-instrumented functions here, so that names are resolved where a profile is
/// read; a program with only the span library reads the placeholders as they are.
using ProfileReader = void (*)(Profile& profile);
MAINBOARD_API void install_profile_reader(ProfileReader reader) noexcept;

}  // namespace mainboard::detail
