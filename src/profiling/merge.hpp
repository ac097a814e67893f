#pragma once

#include "mainboard/profile.hpp"

namespace mainboard::detail {

/// Adds `from` to `into`: threads joined by tid, regions by path (statistics summed), GPU
/// activity and stack samples re-indexed, unavailable reasons joined. For the pieces of one
/// `profile run`: the sampler's, the target's own spans, the injected GPU trace.
void merge_profile(Profile& into, const Profile& from);

}  // namespace mainboard::detail
