#include "sampling/python_frames.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/text.hpp"
#include "sampling/python_layout.hpp"
#include "symbols/symbolizer.hpp"

namespace mainboard::sampling {

namespace {

constexpr PythonLayout kLayouts[] = {
#include "sampling/python_layouts.inc"
};

constexpr int kFrameOwnedByCStack = 3;  // 3.12 on: the evaluation loop's entry shim
// Depth is no sign of a cycle (sys.setrecursionlimit(10**5) is common in parsers and tree code):
// a stack is read in full up to kMaxFrames, the frames beyond are counted up to kMaxWalk and
// said, and a cycle is found as a cycle (Brent's: a frame met again).
constexpr std::size_t kMaxFrames = 1 << 17;
constexpr std::size_t kMaxWalk = 1 << 20;
constexpr std::size_t kMaxString = 4096;  // longer names are cut here, and end in "…"
constexpr std::size_t kMaxLineTable = 1 << 20;

/// Symbols of one ELF file, by name, and the file's first loadable segment address.
struct ElfSymbols {
  std::unordered_map<std::string, std::uint64_t> values;
  std::uint64_t first_load_vaddr = 0;
  bool executable = false;  // ET_EXEC: addresses are absolute
  bool ok = false;
};

ElfSymbols elf_symbols(const std::string& path, const std::vector<std::string>& wanted) {
  ElfSymbols out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (!elf) {
    ::close(fd);
    return out;
  }
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr)) {
    out.executable = ehdr.e_type == ET_EXEC;
    std::size_t phnum = 0;
    elf_getphdrnum(elf, &phnum);
    for (std::size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD) {
        out.first_load_vaddr = ph.p_vaddr - ph.p_offset;
        break;
      }
    }
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn))) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
        continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (!data || sh.sh_entsize == 0) continue;
      std::size_t count = sh.sh_size / sh.sh_entsize;
      for (std::size_t i = 0; i < count; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF) continue;
        const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (!name) continue;
        if (std::find(wanted.begin(), wanted.end(), name) != wanted.end())
          out.values.emplace(name, sym.st_value);
      }
    }
    out.ok = true;
  }
  elf_end(elf);
  ::close(fd);
  return out;
}

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

// The offset of a thread's kernel id inside glibc's struct pthread, found in our own process:
// the same C library maps the same layout into the target (3.9 and 3.10 record only pthread_t).
long pthread_tid_offset() {
  static const long offset = [] {
    auto* self = reinterpret_cast<const unsigned char*>(::pthread_self());
    auto tid = static_cast<std::int32_t>(::gettid());
    for (long off = 0; off < 1024; off += 4) {
      std::int32_t v;
      std::memcpy(&v, self + off, sizeof v);
      if (v == tid) return off;
    }
    return -1L;
  }();
  return offset;
}

void append_utf8(std::string& out, std::uint32_t c) {
  if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) c = 0xFFFD;  // no code point: torn read
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

int lowest_bit(unsigned long mask) {
  return mask ? __builtin_ctzl(mask) : 0;
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

bool PythonReader::read_memory(std::uint64_t address, void* into, std::size_t size) const {
  if (address == 0) {
    errno = EFAULT;
    return false;
  }
  iovec local{into, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return ::process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

bool PythonReader::read_string(std::uint64_t address, std::string& out) const {
  const auto& L = *layout_;
  unsigned char head[128];
  if (L.compact_size > static_cast<long>(sizeof head) ||
      !read_memory(address, head, static_cast<std::size_t>(L.compact_size)))
    return false;
  std::int64_t length;
  std::uint32_t state;
  std::memcpy(&length, head + L.unicode_length, sizeof length);
  std::memcpy(&state, head + L.unicode_state, sizeof state);
  if (length < 0) return false;
  if (!(state & L.compact_mask)) return false;  // legacy strings: never a code object's names
  unsigned kind = (state & L.kind_mask) >> lowest_bit(L.kind_mask);
  bool ascii = state & L.ascii_mask;
  if (kind != 1 && kind != 2 && kind != 4) return false;
  bool cut = static_cast<std::size_t>(length) > kMaxString;
  if (cut) length = static_cast<std::int64_t>(kMaxString);
  std::uint64_t data = address + static_cast<std::uint64_t>(ascii ? L.ascii_size : L.compact_size);
  std::string raw(static_cast<std::size_t>(length) * kind, '\0');
  if (length && !read_memory(data, raw.data(), raw.size())) return false;
  out.clear();
  if (ascii) {
    // An ASCII string holds bytes below 0x80 only: anything else is a torn read (the object
    // freed and its memory reused while it was read), not this string.
    for (char c : raw)
      if (static_cast<unsigned char>(c) >= 0x80) return false;
    out = std::move(raw);
  } else {
    for (std::size_t i = 0; i < static_cast<std::size_t>(length); ++i) {
      std::uint32_t c = 0;
      std::memcpy(&c, raw.data() + i * kind, kind);
      append_utf8(out, c);
    }
  }
  if (cut) out += "\u2026";  // "…": the rest of a name longer than kMaxString
  return true;
}

bool PythonReader::read_bytes_object(std::uint64_t address, std::string& out) const {
  std::int64_t size = 0;
  if (!read_value(address + layout_->varobject_size, size) || size < 0 ||
      static_cast<std::size_t>(size) > kMaxLineTable)
    return false;
  out.assign(static_cast<std::size_t>(size), '\0');
  return size == 0 || read_memory(address + layout_->bytes_data, out.data(), out.size());
}

bool PythonReader::code_at(std::uint64_t address, const unsigned char* header, std::uint32_t& index,
                           const std::string*& linetable) {
  const auto& L = *layout_;
  auto field = [&](long offset) {
    std::uint64_t v = 0;
    std::memcpy(&v, header + offset, sizeof v);
    return v;
  };
  // The fields that name the code: its type, name and file, read fresh each time (a freed code
  // object's address may hold another one now).
  std::uint64_t type = field(L.object_type), name = field(L.code_name),
                file = field(L.code_filename);
  if (code_type_ && type != code_type_) return false;
  if (auto it = code_cache_.find(address);
      it != code_cache_.end() && it->second.name == name && it->second.file == file) {
    index = it->second.index;
    linetable = &it->second.linetable;
    return true;
  }
  PyCode code;
  std::uint64_t qualname = L.code_qualname >= 0 ? field(L.code_qualname) : 0;
  std::uint64_t table = field(L.code_linetable);
  std::int32_t first_line = 0;
  std::memcpy(&first_line, header + L.code_firstlineno, sizeof first_line);
  bool named = read_string(qualname ? qualname : name, code.qualname);
  bool filed = read_string(file, code.file);
  std::string lines;
  bool lined = read_bytes_object(table, lines);
  if (!named || !filed || !lined) {
    // Without the code type to check against, the names are what tells a code object from
    // memory reused for something else. With it, a name that cannot be read is said as such and
    // the stack is kept.
    if (!code_type_) return false;
    if (!named) code.qualname = "[unreadable name]";
    if (!filed) code.file = "[unreadable file]";
    if (!lined) lines.clear();
  }
  code.first_line = first_line > 0 ? static_cast<std::uint32_t>(first_line) : 0;
  std::string key = code.qualname + '\0' + code.file + '\0' + std::to_string(code.first_line);
  auto [it, fresh] = code_index_.emplace(key, static_cast<std::uint32_t>(codes_.size()));
  if (fresh) codes_.push_back(std::move(code));
  auto& entry = code_cache_[address];
  entry = CodeEntry{name, file, it->second, std::move(lines)};
  index = it->second;
  linetable = &entry.linetable;
  return true;
}

std::uint32_t PythonReader::line_of(std::uint32_t code, const std::string& table,
                                    std::int64_t instruction) const {
  std::int64_t line = codes_[code].first_line;
  auto bytes = reinterpret_cast<const unsigned char*>(table.data());
  std::size_t n = table.size();
  if (instruction < 0) return static_cast<std::uint32_t>(line);
  if (layout_->version == 0x0309) {
    // co_lnotab: (bytecode offset increment, signed line increment) pairs; offsets in bytes.
    std::int64_t addr = 0;
    for (std::size_t i = 0; i + 1 < n; i += 2) {
      addr += bytes[i];
      if (addr > instruction * 2) break;
      line += static_cast<signed char>(bytes[i + 1]);
    }
    return line > 0 ? static_cast<std::uint32_t>(line) : 0;
  }
  if (layout_->version == 0x030a) {
    // co_linetable: (bytes covered, signed line delta; -128: no line) pairs.
    std::int64_t end = 0, at = instruction * 2;
    for (std::size_t i = 0; i + 1 < n; i += 2) {
      std::int64_t start = end;
      end += bytes[i];
      int delta = static_cast<signed char>(bytes[i + 1]);
      if (delta != -128) line += delta;
      if (at >= start && at < end) return delta == -128 ? 0 : static_cast<std::uint32_t>(line);
    }
    return 0;
  }
  // 3.11 on, the location table: entries of (code units covered, how the line changes).
  std::size_t i = 0;
  auto varint = [&]() -> std::uint64_t {
    std::uint64_t v = 0;
    int shift = 0;
    while (i < n) {
      unsigned char b = bytes[i++];
      v |= static_cast<std::uint64_t>(b & 63) << shift;
      shift += 6;
      if (!(b & 64) || shift > 60) break;
    }
    return v;
  };
  auto svarint = [&]() -> std::int64_t {
    auto v = varint();
    return (v & 1) ? -static_cast<std::int64_t>(v >> 1) : static_cast<std::int64_t>(v >> 1);
  };
  std::int64_t addr = 0;
  while (i < n) {
    unsigned char first = bytes[i++];
    if (!(first & 0x80)) continue;  // not the start of an entry: resynchronise
    int code_kind = (first >> 3) & 15;
    std::int64_t length = (first & 7) + 1;
    bool has_line = true;
    switch (code_kind) {
      case 15: has_line = false; break;  // no location
      case 14:                           // long form
        line += svarint();
        varint();
        varint();
        varint();
        break;
      case 13: line += svarint(); break;  // no column
      case 10:
      case 11:
      case 12:  // one line, two column bytes
        line += code_kind - 10;
        i += 2;
        break;
      default: i += 1; break;  // short form: same line, one column byte
    }
    if (instruction >= addr && instruction < addr + length)
      return has_line && line > 0 ? static_cast<std::uint32_t>(line) : 0;
    addr += length;
  }
  return 0;
}

std::int32_t PythonReader::tid_of_pthread(std::uint64_t pthread) const {
  long off = pthread_tid_offset();
  std::int32_t tid = 0;
  if (off < 0 || !read_value(pthread + static_cast<std::uint64_t>(off), tid) || tid <= 0) return 0;
  return tid;
}

namespace {

std::uint64_t field_u64(const unsigned char* block, long offset) {
  std::uint64_t v = 0;
  std::memcpy(&v, block + offset, sizeof v);
  return v;
}

}  // namespace

std::size_t PythonReader::state_size() const {
  const auto& L = *layout_;
  return static_cast<std::size_t>(
             std::max({L.tstate_next, L.tstate_interp, L.tstate_frame, L.tstate_cframe,
                       L.tstate_thread_id, L.tstate_native_thread_id})) +
         8;
}

bool PythonReader::read(std::vector<PyThreadStack>& threads, bool with_frames) {
  const auto& L = *layout_;
  threads.clear();
  // Each structure is read in one piece (up to its last field we use): a system call per
  // thread state and per frame, and one for all the code objects of a thread's stack.
  std::vector<unsigned char> tstate(state_size());
  std::uint64_t interp = 0;
  if (!read_value(runtime_ + L.runtime_interpreters_head, interp)) return false;
  // The GIL: held by last_holder while locked (one per process before 3.12, per interpreter on).
  std::uint64_t gil = L.runtime_gil >= 0 ? runtime_ + L.runtime_gil : 0;
  std::uint64_t interps_seen[64];
  for (int interpreters = 0; interp && interpreters < 64; ++interpreters) {
    if (std::find(interps_seen, interps_seen + interpreters, interp) != interps_seen + interpreters)
      break;  // the list came back to an interpreter already read
    interps_seen[interpreters] = interp;
    if (L.interp_gil >= 0 && !read_value(interp + L.interp_gil, gil)) return false;
    std::uint64_t holder = 0;
    std::int32_t locked = 0;
    if (gil) {
      read_value(gil + L.gil_last_holder, holder);
      read_value(gil + L.gil_locked, locked);
    }
    std::uint64_t ts = 0;
    if (!read_value(interp + L.interp_threads_head, ts)) return false;
    seen_states_.clear();
    for (int count = 0; ts && count < 4096; ++count) {
      // A list that comes back to a thread already read (torn, or corrupted) ends there: each
      // thread once.
      if (!seen_states_.insert(ts).second) break;
      if (!read_memory(ts, tstate.data(), tstate.size())) return false;
      PyThreadStack t;
      t.holds_gil = locked && holder == ts;
      if (!read_state(ts, tstate.data(), with_frames, t)) return false;
      threads.push_back(std::move(t));
      ts = field_u64(tstate.data(), L.tstate_next);
    }
    if (!read_value(interp + L.interp_next, interp)) return false;
  }
  return true;
}

bool PythonReader::read_thread(std::uint64_t ts, PyThreadStack& t) {
  const auto& L = *layout_;
  t = PyThreadStack{};
  std::vector<unsigned char> tstate(state_size());
  if (!read_memory(ts, tstate.data(), tstate.size())) return false;
  std::uint64_t gil = L.runtime_gil >= 0 ? runtime_ + L.runtime_gil : 0;
  if (L.interp_gil >= 0 &&
      !read_value(field_u64(tstate.data(), L.tstate_interp) + L.interp_gil, gil))
    gil = 0;
  std::uint64_t holder = 0;
  std::int32_t locked = 0;
  if (gil) {
    read_value(gil + L.gil_last_holder, holder);
    read_value(gil + L.gil_locked, locked);
  }
  t.holds_gil = locked && holder == ts;
  return read_state(ts, tstate.data(), true, t);
}

bool PythonReader::read_state(std::uint64_t ts, const unsigned char* tstate, bool with_frames,
                              PyThreadStack& t) {
  const auto& L = *layout_;
  const std::size_t frame_size =
      static_cast<std::size_t>(std::max({L.frame_previous, L.frame_code, L.frame_lasti,
                                         L.frame_instr, L.frame_is_entry, L.frame_owner})) +
      8;
  const std::size_t code_size = code_header_size(L);
  auto u64 = field_u64;
  t.thread_state = ts;
  t.thread_id = u64(tstate, L.tstate_thread_id);
  t.tid = L.tstate_native_thread_id >= 0
              ? static_cast<std::int32_t>(u64(tstate, L.tstate_native_thread_id))
              : tid_of_pthread(u64(tstate, L.tstate_thread_id));
  if (!with_frames) return true;
  std::uint64_t frame = 0;
  if (L.tstate_cframe >= 0) {
    std::uint64_t cframe = u64(tstate, L.tstate_cframe);
    if (cframe && !read_value(cframe + L.cframe_current_frame, frame)) return false;
  } else {
    frame = u64(tstate, L.tstate_frame);
  }
  frame_block_.resize(frame_size);
  std::vector<unsigned char>& frame_block = frame_block_;
  // The frames first (each names its code object and where it is in it) …
  pending_.clear();
  std::uint64_t tortoise = 0, cut = 0;
  std::size_t power = 1, lambda = 0;
  for (std::size_t steps = 0; frame; ++steps) {
    if (frame == tortoise) return false;  // a cycle: the chain changed while we read it
    if (++lambda == power) {
      tortoise = frame;
      power *= 2;
      lambda = 0;
    }
    if (pending_.size() >= kMaxFrames) {  // the outer frames: counted, not kept
      if (steps >= kMaxWalk) break;
      if (!read_value(frame + static_cast<std::uint64_t>(L.frame_previous), frame)) return false;
      ++cut;
      continue;
    }
    if (!read_memory(frame, frame_block.data(), frame_size)) return false;
    const unsigned char* f = frame_block.data();
    std::uint64_t code = u64(f, L.frame_code), previous = u64(f, L.frame_previous);
    bool entry = false;
    std::int64_t instruction = -1;
    if (L.frame_kind == 0) {
      std::int32_t lasti = 0;
      std::memcpy(&lasti, f + L.frame_lasti, sizeof lasti);
      instruction = L.version == 0x0309 ? lasti / 2 : lasti;  // 3.9 counts bytes
      entry = true;  // each frame object is one run of the evaluation loop
    } else {
      if (L.frame_owner >= 0) {
        if (static_cast<signed char>(f[L.frame_owner]) == kFrameOwnedByCStack) {
          // The shim an evaluation loop starts with: the frame before it was its first.
          if (!pending_.empty()) pending_.back().entry = true;
          frame = previous;
          continue;
        }
      } else {
        entry = f[L.frame_is_entry] != 0;
      }
      std::uint64_t instr = u64(f, L.frame_instr);
      std::uint64_t first = code + static_cast<std::uint64_t>(L.code_adaptive);
      if (instr >= first) instruction = static_cast<std::int64_t>((instr - first) / 2);
    }
    pending_.push_back({frame, code, instruction, entry});
    frame = previous;
  }
  // … then their code objects, all in one read.
  code_blocks_.resize(pending_.size() * code_size);
  iov_local_.resize(pending_.size());
  iov_remote_.resize(pending_.size());
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    iov_local_[i] = {code_blocks_.data() + i * code_size, code_size};
    iov_remote_[i] = {reinterpret_cast<void*>(pending_[i].code), code_size};
  }
  for (std::size_t done = 0; done < pending_.size();) {
    auto n = std::min<std::size_t>(pending_.size() - done, 512);
    auto want = static_cast<ssize_t>(n * code_size);
    if (::process_vm_readv(pid_, iov_local_.data() + done, n, iov_remote_.data() + done, n, 0) !=
        want)
      return false;
    done += n;
  }
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    std::uint32_t index = 0;
    const std::string* linetable = nullptr;
    if (!code_at(pending_[i].code, code_blocks_.data() + i * code_size, index, linetable)) {
      // 3.13: an executable that is not a code object (a frame of a C trampoline).
      if (L.version >= 0x030d && i > 0) continue;
      return false;
    }
    PyFrame pf;
    pf.code = index;
    pf.line = line_of(index, *linetable, pending_[i].instruction);
    pf.entry = pending_[i].entry;
    t.frames.push_back(pf);
    t.frame_addresses.push_back(pending_[i].address);
  }
  if (cut || frame) {
    // Deeper than kMaxFrames: the innermost are kept, and a last frame says how many more
    // there are ("at least" when even counting stopped).
    t.frames_cut = cut;
    t.frames.push_back(PyFrame{cut_code(cut, frame != 0), 0, true});
    t.frame_addresses.push_back(0);
  }
  if (!t.frames.empty()) t.frames.back().entry = true;
  return true;
}

std::uint32_t PythonReader::cut_code(std::uint64_t count, bool more) {
  PyCode code;
  code.qualname =
      fmt::format("[{}{} outer Python frames not read]", more ? "more than " : "", count);
  std::string key = code.qualname + '\0';
  auto [it, fresh] = code_index_.emplace(key, static_cast<std::uint32_t>(codes_.size()));
  if (fresh) codes_.push_back(std::move(code));
  return it->second;
}

StackFrame PythonReader::frame(const PyFrame& f) const {
  const auto& c = codes_[f.code];
  return StackFrame{c.qualname, "[python]", c.file, f.line, false};
}

bool is_python_eval(const StackFrame& f) {
  return f.function == "_PyEval_EvalFrameDefault" || f.function == "_PyEval_EvalFrame";
}

std::vector<StackFrame> splice_python(const std::vector<StackFrame>& native,
                                      const std::vector<StackFrame>& python,
                                      const std::vector<bool>& entries,
                                      const std::string& interpreter_module,
                                      std::vector<std::size_t>* origin) {
  if (origin) origin->clear();
  if (python.empty()) {
    if (origin)
      for (std::size_t i = 0; i < native.size(); ++i)
        origin->push_back(i);
    return native;
  }
  // Python frames in groups, one per run of the evaluation loop, innermost first.
  std::vector<std::pair<std::size_t, std::size_t>> groups;
  for (std::size_t i = 0, begin = 0; i < python.size(); ++i)
    if (entries[i] || i + 1 == python.size()) {
      groups.emplace_back(begin, i + 1);
      begin = i + 1;
    }
  bool any_eval = std::any_of(native.begin(), native.end(), is_python_eval);
  std::vector<StackFrame> out;
  std::size_t next = 0;
  auto put = [&](std::size_t g) {
    out.insert(out.end(), python.begin() + static_cast<long>(groups[g].first),
               python.begin() + static_cast<long>(groups[g].second));
    if (origin) origin->resize(out.size(), kPythonFrame);
  };
  for (std::size_t i = 0; i < native.size(); ++i) {
    const auto& f = native[i];
    if (next == groups.size() && !groups.empty()) break;  // below the outermost Python frame
    if (any_eval && is_python_eval(f)) {
      // The evaluation frames are one per group; where the native stack shows fewer (a chain
      // cut short), the outer groups go under the last one.
      put(next++);
      continue;
    }
    // The interpreter's glue between evaluation frames, and addresses no module covers (what a
    // frame-pointer walk through an interpreter built without them finds): left out. With no
    // evaluation frame in sight, the walk is cut there and the Python frames take over.
    if (f.module == interpreter_module || f.module == "[unknown]") {
      if (!any_eval) break;
      continue;
    }
    out.push_back(f);
    if (origin) origin->push_back(i);
  }
  while (next < groups.size())
    put(next++);
  return out;
}

const PythonSamples::Stack* PythonSamples::at(std::int32_t tid, std::int64_t t_ns,
                                              std::int64_t window_ns) const {
  auto it = threads.find(tid);
  if (it == threads.end() || it->second.empty()) return nullptr;
  const auto& v = it->second;
  auto after = std::lower_bound(v.begin(), v.end(), std::pair{t_ns, std::uint32_t{0}});
  const std::pair<std::int64_t, std::uint32_t>* best = nullptr;
  if (after != v.end()) best = &*after;
  if (after != v.begin()) {
    auto before = std::prev(after);
    if (!best || t_ns - before->first < best->first - t_ns) best = &*before;
  }
  if (!best || std::llabs(best->first - t_ns) > window_ns) return nullptr;
  return &stacks[best->second];
}

PythonPoller::PythonPoller(const PythonPollerOptions& options)
    : options_(options), period_ns_(1'000'000'000LL / std::max<std::uint32_t>(options.hz, 1)) {
  out_.wall = options.wall;
  next_due_ = core::monotonic_ns();
  if (!options.pause) thread_ = std::thread([this] { loop(); });
}

PythonPoller::~PythonPoller() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void PythonPoller::watch(const std::vector<std::int32_t>& pids) {
  std::lock_guard lock(mutex_);
  for (auto pid : pids)
    if (!readers_.count(pid) && std::find(pending_.begin(), pending_.end(), pid) == pending_.end())
      pending_.push_back(pid);
}

void PythonPoller::loop() {
  while (!stop_.load()) {
    auto next = poll();
    auto now = core::monotonic_ns();
    if (next > now) std::this_thread::sleep_for(std::chrono::nanoseconds(next - now));
  }
}

std::int64_t PythonPoller::poll() {
  auto now = core::monotonic_ns();
  if (now >= next_due_) {
    read_all();
    next_due_ += period_ns_;
    if (next_due_ < now) next_due_ = now + period_ns_;  // behind: skip rather than burst
  }
  return next_due_;
}

std::optional<int> PythonPoller::reaped(std::int32_t pid) {
  std::lock_guard lock(mutex_);
  auto it = reaped_.find(pid);
  if (it == reaped_.end()) return std::nullopt;
  return it->second;
}

void PythonPoller::read_all() {
  std::lock_guard lock(mutex_);
  auto now = core::monotonic_ns();
  // Processes not known to be Python: look again four times a second until they are.
  for (auto it = pending_.begin(); it != pending_.end();) {
    auto& when = next_look_[*it];
    if (now < when) {
      ++it;
      continue;
    }
    when = now + 250'000'000;
    std::string why;
    auto reader = PythonReader::open(*it, &why);
    if (reader) {
      out_.interpreter_module[*it] = reader->interpreter_module();
      readers_[*it] = std::move(reader);
      it = pending_.erase(it);
      continue;
    }
    if (!why.empty()) {
      out_.notes.push_back(why);
      it = pending_.erase(it);  // Python, but not readable: said once
      continue;
    }
    if (::kill(*it, 0) != 0 && errno == ESRCH) {
      it = pending_.erase(it);
      continue;
    }
    ++it;
  }
  std::vector<PyThreadStack> threads;
  for (auto it = readers_.begin(); it != readers_.end();) {
    auto& reader = *it->second;
    auto start = core::monotonic_ns();
    // A read that does not validate is tried again at once (twice): the process changed its
    // stack under the read; the next read most often finds it still.
    bool ok = false;
    if (options_.pause) {
      ProcessPause pause(it->first);
      if (pause.ended()) reaped_[it->first] = *pause.ended();
      ok = pause.stopped() && reader.read(threads);
      if (pause.uninterruptible() && !uninterruptible_noted_) {
        uninterruptible_noted_ = true;
        out_.notes.push_back(
            "python: a thread of process " + std::to_string(it->first) +
            " was in uninterruptible sleep (D): such reads were made without stopping it");
      }
      if (!pause.stopped() && !pause.ended() && !pause.uninterruptible() && !pause_refused_) {
        pause_refused_ = true;
        out_.notes.push_back(std::string("python: cannot stop process ") +
                             std::to_string(it->first) + " to read it (" +
                             std::strerror(pause.error()) + "): read while it runs");
      }
      if (!pause.stopped() && !pause.ended())
        for (int attempt = 0; attempt < 3 && !ok; ++attempt)
          ok = reader.read(threads);
    } else {
      for (int attempt = 0; attempt < 3 && !ok; ++attempt)
        ok = reader.read(threads);
    }
    auto end = core::monotonic_ns();
    ++out_.reads;
    out_.read_ns += end - start;
    if (!ok) {
      ++out_.dropped;
      auto& failures = failures_[it->first];
      bool gone = ::kill(it->first, 0) != 0 && errno == ESRCH;
      if (gone || ++failures >= 3) {
        // Ended, or three failures in a row: it may have run exec (a Python child starting
        // another program). Reads of an image that is gone are not torn reads.
        std::string why;
        std::unique_ptr<PythonReader> again;
        if (!gone) again = PythonReader::open(it->first, &why);
        if (!again || again->interpreter_module() != reader.interpreter_module()) {
          out_.dropped -= failures + (gone ? 1 : 0);
          out_.reads -= failures + (gone ? 1 : 0);
          failures_.erase(it->first);
          auto pid = it->first;
          it = readers_.erase(it);
          if (!gone) {
            pending_.push_back(pid);  // look again: it may become Python
            next_look_[pid] = now;
          }
          continue;
        }
        it->second = std::move(again);
        failures = 0;
      }
      ++it;
      continue;
    }
    failures_.erase(it->first);
    // Thread names, when a thread without one shows up: a thread enters threading's table a
    // moment after it starts running, and some never do (started from C), so the reads wait
    // 0.2 s, then twice as long each time, up to 3.2 s.
    bool unnamed = std::any_of(threads.begin(), threads.end(), [&](const PyThreadStack& t) {
      return t.tid > 0 && !out_.thread_names.count(t.tid);
    });
    if (auto& [due, wait] = next_names_[it->first]; unnamed && end >= due) {
      wait = std::clamp<std::int64_t>(wait * 2, 200'000'000, 3'200'000'000);
      due = end + wait;
      auto names = reader.thread_names();
      for (const auto& t : threads)
        if (auto n = names.find(t.thread_id); t.tid > 0 && n != names.end())
          out_.thread_names[t.tid] = n->second;
    }
    for (const auto& t : threads) {
      if (t.tid <= 0 || t.frames.empty()) continue;
      std::string key = std::to_string(it->first);
      for (const auto& f : t.frames)
        key += ';' + std::to_string(f.code) + ':' + std::to_string(f.line) + (f.entry ? "e" : "");
      auto [at, fresh] =
          stack_index_.emplace(std::move(key), static_cast<std::uint32_t>(out_.stacks.size()));
      if (fresh) {
        PythonSamples::Stack stack;
        for (const auto& f : t.frames) {
          stack.frames.push_back(reader.frame(f));
          stack.entries.push_back(f.entry);
        }
        out_.stacks.push_back(std::move(stack));
      }
      out_.threads[t.tid].emplace_back(start + (end - start) / 2, at->second);
      out_.thread_process[t.tid] = it->first;
    }
    ++it;
  }
}

PythonSamples PythonPoller::finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  return std::move(out_);
}

ProcessPause::ProcessPause(std::int32_t pid) : pid_(pid) {
  auto tids = symbols::thread_ids(pid);
  // A thread in uninterruptible sleep (a read from a slow disk or NFS) stops only when that ends,
  // and the wait for it would hold the sampler as long: such a process is not stopped this time.
  // (A thread can still enter one between this look and the interrupt; that wait is the
  // system call's.)
  for (auto tid : tids)
    if (symbols::thread_state(pid, tid) == 'D') {
      uninterruptible_ = true;
      return;
    }
  std::vector<std::int32_t> seized;
  for (auto tid : tids) {
    if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) == 0) {
      seized.push_back(tid);
    } else if (!error_) {
      error_ = errno;
    }
  }
  for (auto tid : seized)
    ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
  for (auto tid : seized) {
    int status = 0;
    pid_t r;
    do
      r = ::waitpid(tid, &status, __WALL);
    while (r < 0 && errno == EINTR);
    if (r != tid) continue;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (tid == pid_) ended_ = status;  // the process is gone (and reaped by this wait)
      continue;
    }
    if (!WIFSTOPPED(status)) continue;
    // PTRACE_EVENT_STOP: our interrupt (or a group stop); otherwise a signal arrived first, and
    // is handed back when the thread is let go.
    int signal = (status >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status);
    threads_.emplace_back(tid, signal);
  }
  if (!threads_.empty()) error_ = 0;
}

ProcessPause::~ProcessPause() {
  for (auto [tid, signal] : threads_)
    ::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<long>(signal)));
}

}  // namespace mainboard::sampling
