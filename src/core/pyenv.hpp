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
  /// The directory whose .python-version (or a parent's) applies: PYENV_DIR, else the current
  /// directory as the shell names it (PWD), else as the kernel does.
  std::string directory;
  /// The search path, for the "system" version: the next program of that name outside pyenv.
  std::string path;
};

/// When `shim` is a pyenv shim: the interpreter (or other program) it would run, chosen as pyenv
/// chooses: PYENV_VERSION, else the nearest .python-version, else $PYENV_ROOT/version, else
/// "system"; each a list of names, a name being an installed version, the newest installed
/// release it is a prefix of ("3.12" → 3.12.10), or "system"; the first of them that has the
/// program. Empty when `shim` is not a shim, or when pyenv must be asked (a name this cannot
/// place: not installed, or of a form only pyenv resolves; nothing chosen has the program): run
/// the shim then, and pyenv answers or says why.
std::optional<std::string> pyenv_shim_target(const std::string& shim, const PyenvContext& context);
/// The same, the context made only once `shim` is known to be one: a program that is no shim
/// (most of those a snapshot finds) costs one read of its head and nothing else.
std::optional<std::string> pyenv_shim_target(const std::string& shim,
                                             const std::function<PyenvContext()>& context);

}  // namespace mainboard::core
