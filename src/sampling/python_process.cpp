// Finding the interpreter in another process: which CPython it runs (from the names of its
// mapped files and Py_Version), where its runtime state is (_PyRuntime, by the ELF symbols), and
// the layout of that version's structures.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "core/process.hpp"
#include "sampling/python_frames.hpp"
#include "sampling/python_layout.hpp"
#include "symbols/elf_symbols.hpp"
#include "symbols/symbolizer.hpp"

namespace mainboard::sampling {

namespace {

constexpr PythonLayout kLayouts[] = {
#include "sampling/python_layouts.inc"
};

using symbols::elf_symbols;

/// "3.11" from "libpython3.11.so.1.0", "python3.11", "python3.11d": {3, 11}.
std::optional<std::pair<int, int>> version_in_name(std::string_view base) {
  if (base.rfind("lib", 0) == 0) base.remove_prefix(3);
  if (base.rfind("python", 0) != 0) return std::nullopt;
  base.remove_prefix(6);
  auto digits = [&](int& into) {
    std::size_t n = 0;
    into = 0;
    while (n < base.size() && n < 3 && base[n] >= '0' && base[n] <= '9')
      into = into * 10 + (base[n++] - '0');
    base.remove_prefix(n);
    return n > 0;
  };
  int major = 0, minor = 0;
  if (!digits(major) || base.empty() || base[0] != '.') return std::nullopt;
  base.remove_prefix(1);
  if (!digits(minor)) return std::nullopt;
  while (!base.empty() && base[0] >= 'a' && base[0] <= 'z')  // build flags: "d", "m", "t"
    base.remove_prefix(1);
  if (!base.empty() && base.rfind(".so", 0) != 0) return std::nullopt;
  return std::pair{major, minor};
}

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

const PythonLayout* layout_for(long version) {
  for (const auto& l : kLayouts)
    if (l.version == version) return &l;
  return nullptr;
}

PythonReader::~PythonReader() = default;

std::unique_ptr<PythonReader> PythonReader::open(std::int32_t pid, std::string* why) {
  std::string ignored;
  std::string& reason = why ? *why : ignored;
  reason.clear();
  auto maps =
      symbols::parse_maps(symbols::read_proc_file("/proc/" + std::to_string(pid) + "/maps"));
  // The interpreter is in libpython3.X.so when the program links it, else in the executable.
  const symbols::Mapping* lib = nullptr;
  const symbols::Mapping* exe = nullptr;
  for (const auto& m : maps) {
    auto base = base_name(m.path);
    if (base.rfind("libpython3.", 0) == 0 && version_in_name(base)) {
      if (!lib || m.start < lib->start) lib = &m;
    } else if (base.rfind("python3", 0) == 0 && version_in_name(base)) {
      if (!exe || m.start < exe->start) exe = &m;
    }
  }
  const symbols::Mapping* where = lib ? lib : exe;
  if (!where) return nullptr;  // not Python (or not CPython 3)
  auto [major, minor] = *version_in_name(base_name(where->path));
  std::string version = std::to_string(major) + "." + std::to_string(minor);
  const PythonLayout* layout = layout_for((major << 8) | minor);
  if (!layout) {
    reason = "python: CPython " + version + " (" + where->path +
             ") has a layout this build does not know (3.9 to 3.13 are known)";
    return nullptr;
  }
  // The file as the target sees it (its mount namespace), else as we do.
  std::string path = "/proc/" + std::to_string(pid) + "/root" + where->path;
  auto syms = elf_symbols(path, {"_PyRuntime", "PyCode_Type", "Py_Version"});
  if (!syms.ok) syms = elf_symbols(where->path, {"_PyRuntime", "PyCode_Type", "Py_Version"});
  if (!syms.ok || !syms.values.count("_PyRuntime")) {
    // An interpreter linked to libpython3.X.so, caught between exec and the loader mapping the
    // library: not Python yet, looked at again (a note here would give up on it for good).
    if (!lib && std::any_of(syms.needed.begin(), syms.needed.end(),
                            [](const std::string& n) { return n.rfind("libpython3.", 0) == 0; }))
      return nullptr;
    reason = "python: no _PyRuntime symbol in " + where->path;
    return nullptr;
  }
  // Load bias: where the file's first mapping (offset 0) landed, less its link-time address.
  std::uint64_t start = 0;
  for (const auto& m : maps)
    if (m.path == where->path && m.offset == 0 && (start == 0 || m.start < start)) start = m.start;
  std::uint64_t bias = syms.executable ? 0 : start - syms.first_load_vaddr;

  std::unique_ptr<PythonReader> r(new PythonReader());
  r->pid_ = pid;
  r->layout_ = layout;
  r->module_ = base_name(where->path);
  r->runtime_ = bias + syms.values["_PyRuntime"];
  if (auto c = syms.values.find("PyCode_Type"); c != syms.values.end())
    r->code_type_ = bias + c->second;
  r->version_ = version;
  r->frame_bytes_ = r->frame_size();
  // In a PID namespace of its own, the interpreter knows its threads by that namespace's ids.
  r->other_pid_namespace_ =
      core::parse_nspid(symbols::read_proc_file("/proc/" + std::to_string(pid) + "/status"))
          .size() > 1;
  if (auto v = syms.values.find("Py_Version"); v != syms.values.end()) {
    std::uint32_t hex = 0;
    if (r->read_value(bias + v->second, hex)) {
      if (static_cast<int>(hex >> 24) != major || static_cast<int>((hex >> 16) & 0xFF) != minor) {
        reason = "python: " + where->path + " says it is " + std::to_string(hex >> 24) + "." +
                 std::to_string((hex >> 16) & 0xFF) + ", not " + version;
        return nullptr;
      }
      r->version_ += "." + std::to_string((hex >> 8) & 0xFF);
    }
  }
  std::uint64_t head = 0;
  if (!r->read_value(r->runtime_ + layout->runtime_interpreters_head, head)) {
    int e = errno;
    reason = "python: cannot read the memory of process " + std::to_string(pid) + " (" +
             std::strerror(e) + ")";
    if (e == EPERM || e == EACCES)
      reason +=
          ": reading another process needs what ptrace needs (kernel.yama.ptrace_scope, "
          "the same user, or CAP_SYS_PTRACE)";
    return nullptr;
  }
  if (layout->version >= 0x030d) {
    // 3.13 publishes its own offsets at the start of _PyRuntime: check that they are ours.
    std::array<std::uint64_t, 44> debug{};
    if (!r->read_memory(r->runtime_, debug.data(), sizeof debug) ||
        std::memcmp(debug.data(), "xdebugpy", 8) != 0) {
      reason = "python: " + version + " without its _Py_DebugOffsets cookie";
      return nullptr;
    }
    auto same = [&](std::size_t i, long ours) {
      return debug[i] == static_cast<std::uint64_t>(ours);
    };
    if (!same(5, layout->runtime_interpreters_head) || !same(9, layout->interp_threads_head) ||
        !same(23, layout->tstate_frame) || !same(25, layout->tstate_native_thread_id) ||
        !same(29, layout->frame_previous) || !same(30, layout->frame_code) ||
        !same(31, layout->frame_instr) || !same(35, layout->code_filename) ||
        !same(37, layout->code_qualname) || !same(38, layout->code_linetable) ||
        !same(43, layout->code_adaptive) || debug[2] != 0) {
      reason = "python: " + r->version_ +
               (debug[2] ? " is a free-threaded build, whose layout this build does not know"
                         : "'s _Py_DebugOffsets differ from the layout this build knows");
      return nullptr;
    }
  }
  return r;
}

}  // namespace mainboard::sampling
