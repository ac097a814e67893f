#pragma once

#include <memory>

#include "core/environ.hpp"
#include "core/fs.hpp"
#include "mainboard/runner.hpp"

namespace mainboard::machine {

/// A gathered host keeps, beside its file tree, what cannot live in files: the environment
/// variables the probes read and the outputs of the commands they ran. These load them; a
/// missing or malformed record reads as empty (a host with no variables and no programs).
core::EnvMap recorded_environment(const core::Fs& fs);
/// The environment the probes of `fs`'s host see: this process's for the live host; the
/// recorded one for a recorded host, with this process's MAINBOARD_* variables on top (they say
/// how to replay it, such as which fake driver library to load, not what the host was).
core::EnvMap host_environment(const core::Fs& fs);
std::shared_ptr<const Runner> recorded_runner(const core::Fs& fs);

}  // namespace mainboard::machine
