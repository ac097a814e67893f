#include "symbols/symbolizer.hpp"

#include <dwarf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/log.hpp"
#include "core/text.hpp"
#include "symbols/demangle.hpp"
#include "symbols/libdw.hpp"
#include "symbols/perf_regs.hpp"

namespace mainboard::symbols {

namespace {

std::optional<std::uint64_t> hex(std::string_view s) {
  std::uint64_t v = 0;
  if (s.rfind("0x", 0) == 0) s.remove_prefix(2);
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

/// Splits off the next whitespace-separated field.
std::string_view field(std::string_view& rest) {
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
    rest.remove_prefix(1);
  auto end = rest.find_first_of(" \t");
  auto f = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return f;
}

std::string basename(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

/// The name of a DWARF subprogram or inlined subroutine (through its abstract origin).
std::string die_name(Dwarf_Die* die) {
  const auto& dw = libdw();
  Dwarf_Attribute attr;
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name})
    if (dw.dwarf_attr_integrate(die, name, &attr))
      if (const char* s = dw.dwarf_formstring(&attr)) return demangle(s);
  if (dw.dwarf_attr_integrate(die, DW_AT_name, &attr))
    if (const char* s = dw.dwarf_formstring(&attr)) return s;
  return "";
}

}  // namespace

/// A module's separate debug information, looked for on this machine only — elfutils' standard
/// search without its last resort, a debuginfod server: by build id under /usr/lib/debug, then by
/// its .gnu_debuglink name (the file's name and ".debug" when it has none) beside the file (by
/// its name and by its real path), in .debug/ there, and under /usr/lib/debug with the
/// directory's path and each shorter tail of it; the dwz file a debug file names in its
/// .gnu_debugaltlink by that path, beside it and under /usr/lib/debug/.dwz. With DEBUGINFOD_URLS
/// set (the debuginfod client packages of several distributions set it for login shells) and a
/// server slow to answer or out of reach (a compute node), the last resort held a 0.1-second
/// profile for minutes, one module at a time; it also loaded libdebuginfod with curl, GnuTLS and
/// twenty more libraries into the profiler. MAINBOARD_DEBUGINFOD=1 gives the standard search back.
int find_debuginfo_here(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                        const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                        char** debuginfo_file_name) {
  const auto& dw = libdw();
  // libdwfl asks for a dwz file with its name as the link and no CRC; a main file's link has one.
  const bool dwz = debuglink_file && *debuglink_file && debuglink_crc == 0;
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  int length = dw.dwfl_module_build_id(mod, &bits, &vaddr);
  // Without a build id no server can be asked for the module's own debug file, and elfutils'
  // search (which checks the link's CRC) is the local one.
  if (length <= 0 && !dwz)
    return dw.dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                           debuglink_crc, debuginfo_file_name);
  // By build id: the module's, or for a dwz file the one its link records.
  int fd = dw.dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                           debuglink_crc, debuginfo_file_name);
  if (fd >= 0 || !file_name || *file_name != '/') return fd;
  namespace fs = std::filesystem;
  const std::string link = debuglink_file && *debuglink_file
                               ? debuglink_file
                               : fs::path(file_name).filename().string() + ".debug";
  std::vector<std::string> dirs{fs::path(file_name).parent_path().string()};
  std::error_code ec;
  if (auto real = fs::canonical(file_name, ec); !ec && real.parent_path().string() != dirs[0])
    dirs.push_back(real.parent_path().string());
  std::vector<std::string> candidates;
  if (dwz && link.front() == '/') candidates.push_back(link);
  for (const auto& dir : dirs) {
    if (dwz && link.front() == '/') break;
    candidates.push_back(dir + "/" + link);
    candidates.push_back(dir + "/.debug/" + link);
    for (std::string tail = dir;; tail = tail.substr(tail.find('/', 1))) {
      candidates.push_back("/usr/lib/debug" + tail + "/" + link);
      if (tail.find('/', 1) == std::string::npos) break;
    }
    candidates.push_back("/usr/lib/debug/" + link);
  }
  if (dwz) candidates.push_back("/usr/lib/debug/.dwz/" + fs::path(link).filename().string());
  struct stat self {};
  bool have_self = ::stat(file_name, &self) == 0;
  for (const auto& candidate : candidates) {
    int c = ::open(candidate.c_str(), O_RDONLY | O_CLOEXEC);
    if (c < 0) continue;
    struct stat st {};
    // Never the file itself (by another name): it has no DWARF, or it would not be asked for.
    bool usable = ::fstat(c, &st) == 0 && S_ISREG(st.st_mode) &&
                  !(have_self && st.st_dev == self.st_dev && st.st_ino == self.st_ino);
    if (usable) {
      usable = false;
      if (Elf* elf = dw.elf_begin(c, ELF_C_READ_MMAP, nullptr)) {
        GElf_Ehdr ehdr;
        if (dwz) {
          // The dwz file's build id is in the debug file's link, which this call does not see:
          // an ELF file at the path the link gives is taken, as its name is exact.
          usable = dw.gelf_getehdr(elf, &ehdr) != nullptr;
        } else {
          // The file the link names and no other: the module's build id.
          const void* id = nullptr;
          ssize_t n = dw.dwelf_elf_gnu_build_id(elf, &id);
          usable = n == length && std::memcmp(id, bits, static_cast<std::size_t>(n)) == 0;
        }
        dw.elf_end(elf);
      }
    }
    if (usable) {
      *debuginfo_file_name = ::strdup(candidate.c_str());
      return c;
    }
    ::close(c);
  }
  return -1;
}

Dwfl* begin_dwfl() {
  const auto& dw = libdw();
  if (!dw) {
    static std::once_flag said;
    std::call_once(said,
                   [&] { core::log().warn("frames in binaries are not named: {}", dw.error); });
    return nullptr;
  }
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks here = {
      .find_elf = dw.dwfl_linux_proc_find_elf,
      .find_debuginfo = find_debuginfo_here,
      .section_address = nullptr,
      .debuginfo_path = &debuginfo_path,
  };
  static const Dwfl_Callbacks standard = {
      .find_elf = dw.dwfl_linux_proc_find_elf,
      .find_debuginfo = dw.dwfl_standard_find_debuginfo,
      .section_address = nullptr,
      .debuginfo_path = &debuginfo_path,
  };
  const char* allow = std::getenv("MAINBOARD_DEBUGINFOD");
  return dw.dwfl_begin(allow && std::string_view(allow) == "1" ? &standard : &here);
}

std::string read_proc_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::int32_t> thread_ids(std::int32_t pid) {
  std::vector<std::int32_t> out;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    if (auto tid = core::parse_u64(e.path().filename().string()))
      out.push_back(static_cast<std::int32_t>(*tid));
  return out;
}

std::vector<std::int32_t> process_tree(std::int32_t pid) {
  // Every process's parent, from /proc/N/stat (its fourth field, after the name in parentheses,
  // which may hold anything).
  std::multimap<std::int32_t, std::int32_t> children;
  std::error_code ec;
  bool found = false;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    auto n = core::parse_u64(e.path().filename().string());
    if (!n) continue;
    auto stat = read_proc_file(e.path().string() + "/stat");
    auto close = stat.rfind(") ");
    if (close == std::string::npos) continue;
    auto fields = core::split_ws(std::string_view(stat).substr(close + 2));
    auto parent = fields.size() > 1 ? core::parse_u64(fields[1]) : std::nullopt;
    if (static_cast<std::int32_t>(*n) == pid) found = true;
    if (parent) children.emplace(static_cast<std::int32_t>(*parent), static_cast<std::int32_t>(*n));
  }
  std::vector<std::int32_t> out;
  if (!found) return out;
  out.push_back(pid);
  for (std::size_t i = 0; i < out.size() && out.size() < 65536; ++i) {
    auto [a, b] = children.equal_range(out[i]);
    for (auto it = a; it != b; ++it)
      if (std::find(out.begin(), out.end(), it->second) == out.end()) out.push_back(it->second);
  }
  return out;
}

char thread_state(std::int64_t pid, std::int64_t tid) {
  auto stat =
      read_proc_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  auto close = stat.rfind(") ");  // the name in parentheses may hold anything
  return close == std::string::npos || close + 2 >= stat.size() ? 0 : stat[close + 2];
}

std::vector<Mapping> parse_maps(std::string_view text) {
  std::vector<Mapping> out;
  for (auto line : core::split_lines(text)) {
    // 7f1c2a000000-7f1c2a021000 r-xp 00002000 08:01 1311 /usr/lib/x86_64-linux-gnu/libm.so.6
    std::string_view rest = line;
    auto range = field(rest);
    auto perms = field(rest);
    auto offset = field(rest);
    field(rest);  // device
    auto inode = field(rest);
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
      rest.remove_prefix(1);
    auto dash = range.find('-');
    if (dash == std::string_view::npos || perms.size() != 4) continue;
    auto start = hex(range.substr(0, dash)), end = hex(range.substr(dash + 1)), off = hex(offset);
    if (!start || !end || !off || *end <= *start) continue;
    Mapping m;
    m.start = *start;
    m.end = *end;
    m.offset = *off;
    m.perms = std::string(perms);
    std::uint64_t ino = 0;
    std::from_chars(inode.data(), inode.data() + inode.size(), ino);
    m.inode = ino;
    m.path = std::string(rest);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<JitSymbol> parse_perf_map(std::string_view text) {
  std::vector<JitSymbol> out;
  for (auto line : core::split_lines(text)) {
    std::string_view rest = line;
    auto start = hex(field(rest)), size = hex(field(rest));
    while (!rest.empty() && rest.front() == ' ')
      rest.remove_prefix(1);
    if (!start || !size || *size == 0 || rest.empty()) continue;
    out.push_back({*start, *size, std::string(rest)});
  }
  std::sort(out.begin(), out.end(),
            [](const JitSymbol& a, const JitSymbol& b) { return a.start < b.start; });
  return out;
}

Symbolizer::Symbolizer() = default;

Symbolizer::~Symbolizer() {
  std::lock_guard lock(elfutils_mutex());
  if (dwfl_) libdw().dwfl_end(dwfl_);
}

void Symbolizer::set_mappings(std::vector<Mapping> mappings) {
  mappings_ = std::move(mappings);
  built_ = false;
  cache_.clear();
}

void Symbolizer::set_jit_symbols(std::vector<JitSymbol> symbols) {
  jit_ = std::move(symbols);
  std::sort(jit_.begin(), jit_.end(),
            [](const JitSymbol& a, const JitSymbol& b) { return a.start < b.start; });
  cache_.clear();
}

void Symbolizer::build() {
  const auto& dw = libdw();
  built_ = true;
  attached_ = false;
  if (dwfl_) dw.dwfl_end(dwfl_);
  dwfl_ = begin_dwfl();
  if (!dwfl_) return;
  // libdwfl reads the mappings as /proc/<pid>/maps text, and works out each file's load bias
  // from them: file-backed mappings only, sorted.
  std::vector<const Mapping*> files;
  // Files only: perf reports anonymous memory (where JIT code lives) as "//anon".
  std::map<std::string, bool> is_file;
  for (const auto& m : mappings_) {
    if (m.path.empty() || m.path[0] != '/' || m.path.rfind("//", 0) == 0) continue;
    auto [it, fresh] = is_file.try_emplace(m.path, false);
    if (fresh) {
      std::error_code ec;
      it->second = std::filesystem::is_regular_file(m.path, ec);
    }
    if (it->second) files.push_back(&m);
  }
  std::sort(files.begin(), files.end(),
            [](const Mapping* a, const Mapping* b) { return a->start < b->start; });
  std::string text;
  for (const auto* m : files)
    text += fmt::format("{:x}-{:x} {} {:08x} 00:00 {} {}\n", m->start, m->end, m->perms, m->offset,
                        m->inode ? m->inode : 1, m->path);
  dw.dwfl_report_begin(dwfl_);
  if (!text.empty())
    if (FILE* f = fmemopen(text.data(), text.size(), "r")) {
      dw.dwfl_linux_proc_maps_report(dwfl_, f);
      std::fclose(f);
    }
  dw.dwfl_report_end(dwfl_, nullptr, nullptr);
}

std::vector<StackFrame> Symbolizer::lookup(std::uint64_t address) {
  const auto& dw = libdw();
  std::vector<StackFrame> out;
  // JIT code first: the runtime's perf map names it, whatever mapping holds it.
  auto it = std::upper_bound(jit_.begin(), jit_.end(), address,
                             [](std::uint64_t a, const JitSymbol& s) { return a < s.start; });
  if (it != jit_.begin()) {
    --it;
    if (address < it->start + it->size) {
      out.push_back({it->name, "[jit]", "", 0, false});
      return out;
    }
  }
  // Memory no file backs (the vDSO, anonymous memory) is not asked of libdwfl, which may count
  // it in the range of the library mapped before it (the vDSO's clock_gettime was named
  // "libmainboard_spans.so+0x140b66").
  for (const auto& m : mappings_)
    if (address >= m.start && address < m.end && !m.path.empty() && m.path[0] == '[' &&
        jit_.empty()) {
      out.push_back({m.path, m.path, "", 0, false});
      return out;
    }
  Dwfl_Module* mod = dwfl_ ? dw.dwfl_addrmodule(dwfl_, address) : nullptr;
  if (mod) {
    Dwarf_Addr module_start = 0;
    const char* module_name = dw.dwfl_module_info(mod, nullptr, &module_start, nullptr, nullptr,
                                                  nullptr, nullptr, nullptr);
    std::string module = module_name ? basename(module_name) : "[unknown]";
    GElf_Off offset = 0;
    GElf_Sym sym;
    const char* symbol =
        dw.dwfl_module_addrinfo(mod, address, &offset, &sym, nullptr, nullptr, nullptr);
    StackFrame outer;
    outer.module = module;
    if (symbol) {
      // "clock_gettime@@GLIBC_2.17": the symbol version is not part of the name.
      std::string_view plain = symbol;
      if (auto at = plain.find('@'); at != std::string_view::npos && at > 0)
        plain = plain.substr(0, at);
      outer.function = demangle(std::string(plain).c_str());
    } else {
      outer.function = fmt::format("{}+0x{:x}", module,
                                   address - module_start);  // no symbol: offset in the module
    }

    // Source line of the address itself: belongs to the innermost frame.
    std::string file;
    std::uint32_t line = 0;
    if (Dwfl_Line* l = dw.dwfl_module_getsrc(mod, address)) {
      int lineno = 0;
      if (const char* src = dw.dwfl_lineinfo(l, nullptr, &lineno, nullptr, nullptr, nullptr)) {
        file = src;
        line = static_cast<std::uint32_t>(std::max(lineno, 0));
      }
    }
    // Inlined functions around the address, innermost first; each call site is the location in
    // the frame outside it.
    Dwarf_Addr bias = 0;
    if (Dwarf_Die* cu = dw.dwfl_module_addrdie(mod, address, &bias)) {
      Dwarf_Die* scopes = nullptr;
      int n = dw.dwarf_getscopes(cu, address - bias, &scopes);
      Dwarf_Files* files = nullptr;
      dw.dwarf_getsrcfiles(cu, &files, nullptr);
      for (int i = 0; i < n; ++i) {
        if (dw.dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
        StackFrame inl;
        inl.function = die_name(&scopes[i]);
        if (inl.function.empty()) inl.function = "[inlined]";
        inl.module = module;
        inl.inlined = true;
        inl.file = file;
        inl.line = line;
        out.push_back(std::move(inl));
        // Where it was called from: the next frame's location.
        Dwarf_Attribute attr;
        Dwarf_Word call_file = 0, call_line = 0;
        file.clear();
        line = 0;
        if (dw.dwarf_formudata(dw.dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &call_file) ==
                0 &&
            files)
          if (const char* f = dw.dwarf_filesrc(files, call_file, nullptr, nullptr)) file = f;
        if (dw.dwarf_formudata(dw.dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &call_line) == 0)
          line = static_cast<std::uint32_t>(call_line);
      }
      std::free(scopes);
    }
    outer.file = file;
    outer.line = line;
    out.push_back(std::move(outer));
    return out;
  }
  // Executable memory no file backs and no perf map names: code a JIT made (oneDNN's kernels,
  // a runtime without a perf map). "[unknown]" is left for an address in no executable mapping,
  // which a walk that kept to the code (CodeMap) never gives.
  for (const auto& m : mappings_)
    if (address >= m.start && address < m.end && m.perms.size() >= 3 && m.perms[2] == 'x') {
      out.push_back({fmt::format("0x{:x}", address), "[jit]", "", 0, false});
      return out;
    }
  out.push_back({fmt::format("0x{:x}", address), "[unknown]", "", 0, false});
  return out;
}

const std::vector<StackFrame>& Symbolizer::symbolize(std::uint64_t address, bool return_address) {
  // A return address points after the call: the call itself is one byte earlier.
  std::uint64_t pc = return_address && address > 0 ? address - 1 : address;
  auto it = cache_.find(pc);
  if (it != cache_.end()) return it->second;
  std::lock_guard lock(elfutils_mutex());
  if (!built_) build();
  return cache_.emplace(pc, lookup(pc)).first->second;
}

}  // namespace mainboard::symbols

namespace mainboard::symbols {

namespace {

using Input = Symbolizer::UnwindInput;

pid_t next_thread(Dwfl*, void* arg, void** thread_arg) {
  auto* in = static_cast<Input*>(arg);
  if (in->handed_out) return 0;
  in->handed_out = true;
  *thread_arg = arg;
  return in->tid;
}

bool get_thread(Dwfl*, pid_t tid, void* arg, void** thread_arg) {
  auto* in = static_cast<Input*>(arg);
  *thread_arg = arg;
  return tid == in->tid;
}

/// Reads from the stack copy only: the registers and the copy are all perf gave us.
bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  auto* in = static_cast<Input*>(arg);
  const auto* layout = perf_regs();
  if (!layout || !in->regs || in->regs->size() < layout->count || !in->stack) return false;
  std::uint64_t sp = (*in->regs)[layout->sp];
  // A garbage address near the top of the address space must not wrap the bound around: the
  // offset into the copy is checked, not the address's end.
  std::size_t size = in->stack->size();
  if (addr < sp || size < sizeof(Dwarf_Word) || addr - sp > size - sizeof(Dwarf_Word)) return false;
  std::memcpy(result, in->stack->data() + (addr - sp), sizeof(Dwarf_Word));
  return true;
}

bool set_initial_registers(Dwfl_Thread* thread, void* arg) {
  const auto& dw = libdw();
  auto* in = static_cast<Input*>(arg);
  const auto* layout = perf_regs();
  if (!layout) return false;
  std::array<std::uint64_t, 32> dwarf{};
  if (!dwarf_registers(*layout, *in->regs, dwarf)) return false;
  if (!dw.dwfl_thread_state_registers(thread, 0, layout->dwarf_count, dwarf.data())) return false;
  dw.dwfl_thread_state_register_pc(thread, (*in->regs)[layout->pc]);
  return true;
}

const Dwfl_Thread_Callbacks kCallbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
    .detach = nullptr,
    .thread_detach = nullptr,
};

}  // namespace

const PerfRegs* perf_regs() {
#if defined(__x86_64__)
  return &kPerfRegsX86_64;
#elif defined(__aarch64__)
  return &kPerfRegsAarch64;
#else
  return nullptr;
#endif
}

bool Symbolizer::covers(std::uint64_t address) {
  std::lock_guard lock(elfutils_mutex());
  if (!built_) build();
  return dwfl_ && libdw().dwfl_addrmodule(dwfl_, address) != nullptr;
}

std::vector<std::uint64_t> Symbolizer::unwind(std::int32_t tid,
                                              const std::vector<std::uint64_t>& regs,
                                              const std::vector<unsigned char>& stack,
                                              std::vector<bool>* activations) {
  const auto& dw = libdw();
  std::vector<std::uint64_t> pcs;
  if (activations) activations->clear();
  const auto* layout = perf_regs();
  if (!layout || regs.size() < layout->count) return pcs;
  std::lock_guard lock(elfutils_mutex());
  if (!built_) build();
  if (!dwfl_) return pcs;
  if (!attached_) {
    attached_ = dw.dwfl_attach_state(dwfl_, nullptr, tid, &kCallbacks, &input_);
    if (!attached_) return pcs;
  }
  input_ = {tid, &regs, &stack, false};
  struct Out {
    std::vector<std::uint64_t>* pcs;
    std::vector<bool>* activations;
  } out{&pcs, activations};
  auto frame = [](Dwfl_Frame* state, void* arg) -> int {
    auto* o = static_cast<Out*>(arg);
    Dwarf_Addr pc = 0;
    bool activation = false;
    if (!libdw().dwfl_frame_pc(state, &pc, &activation) || pc == 0) return DWARF_CB_ABORT;
    o->pcs->push_back(pc);
    if (o->activations) o->activations->push_back(activation);
    return o->pcs->size() >= 127 ? DWARF_CB_ABORT : DWARF_CB_OK;
  };
  dw.dwfl_getthread_frames(dwfl_, tid, frame, &out);  // a partial stack is kept
  return pcs;
}

}  // namespace mainboard::symbols
