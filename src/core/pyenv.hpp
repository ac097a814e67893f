#pragma once

// A pyenv shim (`$PYENV_ROOT/shims/python3`) is a bash script that starts bash and pyenv to pick
// an interpreter: about 80 ms for `python3 --version`. The same choice, made without running
// them, from the files pyenv itself reads.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mainboard::core {

struct PyenvContext {
  /// Looks up an environment variable (PYENV_VERSION); empty when unset.
  std::function<std::optional<std::string>(std::string_view)> env;
  /// The directory whose .python-version (or a parent's) applies: the current directory.
  std::string directory;
  /// The search path, for the "system" version: the next program of that name outside pyenv.
  std::string path;
};

/// When `shim` is a pyenv shim: the interpreter (or other program) it would run, chosen as pyenv
/// chooses: PYENV_VERSION, else the nearest .python-version, else $PYENV_ROOT/version, else
/// "system"; each a list of names tried in order, a name being an installed version, the
/// newest installed version it is a prefix of ("3.12" → 3.12.1), or "system". Empty when `shim`
/// is not a shim, or when pyenv would have to be asked (nothing chosen has the program): run
/// the shim then, and pyenv says why.
std::optional<std::string> pyenv_shim_target(const std::string& shim, const PyenvContext& context);

}  // namespace mainboard::core
