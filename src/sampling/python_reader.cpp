// Reading a CPython process's threads and frames from outside it (process_vm_readv): thread
// states, frames, code objects, their names and line tables, for the layout of its version.
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/process.hpp"
#include "core/text.hpp"
#include "sampling/python_frames.hpp"
#include "sampling/python_layout.hpp"
#include "symbols/symbolizer.hpp"

namespace mainboard::sampling {

namespace {

constexpr int kFrameOwnedByCStack = 3;  // 3.12 on: the evaluation loop's entry shim
// Depth is no sign of a cycle (sys.setrecursionlimit(10**5) is common in parsers and tree code):
// a stack is read in full up to kMaxFrames, the frames beyond are counted up to kMaxWalk and
// said, and a cycle is found as a cycle (Brent's: a frame met again).
constexpr std::size_t kMaxFrames = 1 << 17;
constexpr std::size_t kMaxWalk = 1 << 20;
constexpr std::size_t kMaxString = 4096;  // longer names are cut here, and end in "…"
constexpr std::size_t kMaxLineTable = 1 << 20;

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
  // A name is an identifier (or "<module>", "<lambda>", dotted): a control character in it is a
  // torn read, and a file name that holds one would break every line-based format downstream.
  auto plain = [](const std::string& text) {
    return std::none_of(text.begin(), text.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  };
  bool named = read_string(qualname ? qualname : name, code.qualname) && plain(code.qualname);
  bool filed = read_string(file, code.file) && plain(code.file);
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

std::int32_t PythonReader::host_tid(std::int32_t tid) {
  if (!other_pid_namespace_ || tid <= 0) return tid;
  auto it = host_tids_.find(tid);
  if (it == host_tids_.end() && !host_tids_fresh_) {
    // A thread not seen yet: the map read again (at most once per read of the threads).
    host_tids_fresh_ = true;
    host_tids_.clear();
    for (auto host : symbols::thread_ids(pid_)) {
      auto nspid = core::parse_nspid(symbols::read_proc_file(
          "/proc/" + std::to_string(pid_) + "/task/" + std::to_string(host) + "/status"));
      if (!nspid.empty()) host_tids_[static_cast<std::int32_t>(nspid.back())] = host;
    }
    it = host_tids_.find(tid);
  }
  return it == host_tids_.end() ? 0 : it->second;
}

std::size_t PythonReader::page_size() {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

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
  host_tids_fresh_ = false;
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

namespace {

/// How many bytes of a frame's local variables (and value stack) each read compares: enough to
/// tell one call of a function from the next at the same address (their arguments differ).
constexpr std::size_t kLocalsCompared = 32;

}  // namespace

std::size_t PythonReader::frame_size() const {
  auto shape = frame_shape();
  return shape.locals <= shape.head ? std::max(shape.head, shape.locals + kLocalsCompared)
                                    : shape.head + kLocalsCompared;
}

PythonReader::FrameShape PythonReader::frame_shape() const {
  const auto& L = *layout_;
  FrameShape s;
  s.head = static_cast<std::size_t>(
               std::max({L.frame_previous, L.frame_code, L.frame_lasti, L.frame_instr,
                         L.frame_is_entry, L.frame_owner, L.frame_state, L.frame_object})) +
           8;
  s.locals = L.frame_localsplus > 0 ? static_cast<std::size_t>(L.frame_localsplus) : s.head;
  return s;
}

bool PythonReader::same_frame(const unsigned char* a, const unsigned char* b,
                              bool innermost) const {
  const auto& L = *layout_;
  auto u64 = field_u64;
  if (L.frame_state >= 0) {
    // 3.9, 3.10: a frame object with no references has been freed (it may be in the free list,
    // its back link naming the next free frame), and a caller that is not running has returned.
    // The innermost may be not running at all: the thread is setting it up, or leaving it.
    if (static_cast<std::int64_t>(u64(a, 0)) <= 0 || static_cast<std::int64_t>(u64(b, 0)) <= 0)
      return false;
    if (!innermost && static_cast<signed char>(b[L.frame_state]) != L.frame_state_running)
      return false;
  }
  if (u64(a, L.frame_previous) != u64(b, L.frame_previous) ||
      u64(a, L.frame_code) != u64(b, L.frame_code))
    return false;
  if (innermost) return true;  // the one frame that runs: only its place in the stack must hold
  // A caller holds still while its callee lives: all of it read twice must be the same, but for
  // what changes without a new call (the count of references; 3.11's frame object, made when
  // someone asks for it).
  std::size_t size = frame_bytes_;
  for (std::size_t i = 0; i < size; i += 8) {
    auto offset = static_cast<long>(i);
    if (L.frame_state >= 0 && offset == 0) continue;
    if (L.frame_object >= 0 && offset == L.frame_object) continue;
    std::size_t n = std::min<std::size_t>(8, size - i);
    if (std::memcmp(a + i, b + i, n) != 0) return false;
  }
  return true;
}

std::size_t PythonReader::frame_iov(std::uint64_t frame, unsigned char* into, struct iovec* local,
                                    struct iovec* remote) const {
  // The head, then the first locals where they lie apart from it (3.9 and 3.10 keep 240 bytes
  // of block stack between), never past the end of the page they start on: what lies beyond a
  // frame with few locals may be unmapped, and the whole read would fail.
  const auto shape = frame_shape();
  std::size_t page = page_size();
  auto clip = [&](std::uint64_t at, std::size_t want) {
    std::size_t left = page - static_cast<std::size_t>(at % page);
    return std::min(want, left);
  };
  std::size_t n = 0;
  if (shape.locals <= shape.head) {
    std::size_t want = shape.locals + kLocalsCompared;
    std::size_t size =
        want > shape.head ? shape.head + clip(frame + shape.head, want - shape.head) : shape.head;
    std::memset(into, 0, frame_bytes_);
    local[n] = {into, size};
    remote[n++] = {reinterpret_cast<void*>(frame), size};
  } else {
    std::memset(into, 0, frame_bytes_);
    local[n] = {into, shape.head};
    remote[n++] = {reinterpret_cast<void*>(frame), shape.head};
    std::uint64_t at = frame + shape.locals;
    std::size_t size = clip(at, kLocalsCompared);
    if (size) {
      local[n] = {into + shape.head, size};
      remote[n++] = {reinterpret_cast<void*>(at), size};
    }
  }
  return n;
}

bool PythonReader::read_state(std::uint64_t ts, const unsigned char* tstate, bool with_frames,
                              PyThreadStack& t) {
  const auto& L = *layout_;
  const std::size_t code_size = code_header_size(L);
  auto u64 = field_u64;
  t.thread_state = ts;
  t.thread_id = u64(tstate, L.tstate_thread_id);
  t.tid = host_tid(L.tstate_native_thread_id >= 0
                       ? static_cast<std::int32_t>(u64(tstate, L.tstate_native_thread_id))
                       : tid_of_pthread(u64(tstate, L.tstate_thread_id)));
  t.torn = false;
  if (!with_frames) return true;
  std::uint64_t frame = 0;
  if (L.tstate_cframe >= 0) {
    std::uint64_t cframe = u64(tstate, L.tstate_cframe);
    if (cframe && !read_value(cframe + L.cframe_current_frame, frame)) return torn(t);
  } else {
    frame = u64(tstate, L.tstate_frame);
  }
  // The frames, each read twice: first on its own (the innermost) or together with the frame it
  // called, read again after it. A frame's caller holds still as long as the frame lives, and
  // the frame it called lives at least until the second read, so a stack whose every frame
  // reads the same both times, each frame naming the next as its caller at its second read, is
  // one the thread really had; the innermost then runs on, and is taken as its second read
  // saw it. A thread that returned, called anew or freed a frame under the walk changes one of
  // them (a call at the same place with other arguments has other locals), and the stack is
  // torn: not kept, read again.
  std::size_t stride = frame_bytes_;
  pending_.clear();
  frame_reads_.clear();
  std::uint64_t tortoise = 0, cut = 0;
  std::size_t power = 1, lambda = 0;
  struct iovec local[6], remote[6];
  std::vector<unsigned char> again(stride);
  // 3.11 on, read after each second read: the chunk of the thread's frame stack in use, its top
  // and its end. A frame of that chunk at or above the top has returned (the stack keeps the
  // bytes of frames that returned as they were, so reading them twice proves nothing).
  std::uint64_t stack[3] = {};
  const bool has_stack = L.tstate_datastack_chunk >= 0;
  auto add_stack = [&](struct iovec* l, struct iovec* r) -> std::size_t {
    if (!has_stack) return 0;
    *l = {stack, sizeof stack};
    *r = {reinterpret_cast<void*>(ts + static_cast<std::uint64_t>(L.tstate_datastack_chunk)),
          sizeof stack};
    return 1;
  };
  auto returned = [&](std::uint64_t f) {
    return has_stack && f >= stack[0] && f < stack[2] && f >= stack[1];
  };
  std::size_t steps = 0;
  for (; frame; ++steps) {
    if (frame == tortoise) return torn(t);  // a cycle: the chain changed while we read it
    if (++lambda == power) {
      tortoise = frame;
      power *= 2;
      lambda = 0;
    }
    if (pending_.size() >= kMaxFrames) break;  // the outer frames are counted below
    std::size_t at = pending_.size() * stride;
    frame_reads_.resize(at + stride);
    std::size_t n = frame_iov(frame, frame_reads_.data() + at, local, remote);
    if (!pending_.empty() && checked_) {
      n += frame_iov(pending_.back().address, again.data(), local + n, remote + n);
      n += add_stack(local + n, remote + n);
    }
    ssize_t want = 0;
    for (std::size_t i = 0; i < n; ++i)
      want += static_cast<ssize_t>(local[i].iov_len);
    if (::process_vm_readv(pid_, local, n, remote, n, 0) != want) return torn(t);
    const unsigned char* f = frame_reads_.data() + at;
    if (!pending_.empty() && checked_) {
      std::size_t k = pending_.size() - 1;
      unsigned char* first = frame_reads_.data() + k * stride;
      if (u64(again.data(), L.frame_previous) != frame ||
          !same_frame(first, again.data(), k == 0) || returned(pending_.back().address))
        return torn(t);
      if (k == 0) std::memcpy(first, again.data(), stride);  // the innermost as it is now
    }
    PendingFrame p;
    p.address = frame;
    p.code = u64(f, L.frame_code);
    pending_.push_back(p);
    frame = u64(f, L.frame_previous);
  }
  // The outermost frame's second read goes with the code objects' (one system call), below.
  if (frame) {
    // Deeper than kMaxFrames: the frames beyond are counted (up to kMaxWalk), not kept or
    // checked.
    for (; frame && steps < kMaxWalk; ++steps, ++cut)
      if (!read_value(frame + static_cast<std::uint64_t>(L.frame_previous), frame)) return torn(t);
  }
  // Each frame's code object, all in one read (with the outermost frame's second read first).
  code_blocks_.resize(pending_.size() * code_size);
  iov_local_.clear();
  iov_remote_.clear();
  if (!pending_.empty() && checked_) {
    struct iovec l[3], r[3];
    std::size_t n = frame_iov(pending_.back().address, again.data(), l, r);
    n += add_stack(l + n, r + n);
    for (std::size_t i = 0; i < n; ++i) {
      iov_local_.push_back(l[i]);
      iov_remote_.push_back(r[i]);
    }
  }
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    iov_local_.push_back({code_blocks_.data() + i * code_size, code_size});
    iov_remote_.push_back({reinterpret_cast<void*>(pending_[i].code), code_size});
  }
  for (std::size_t done = 0; done < iov_local_.size();) {
    auto n = std::min<std::size_t>(iov_local_.size() - done, 512);
    ssize_t want = 0;
    for (std::size_t i = done; i < done + n; ++i)
      want += static_cast<ssize_t>(iov_local_[i].iov_len);
    if (::process_vm_readv(pid_, iov_local_.data() + done, n, iov_remote_.data() + done, n, 0) !=
        want)
      return torn(t);
    done += n;
  }
  if (!pending_.empty() && checked_) {
    std::size_t k = pending_.size() - 1;
    unsigned char* first = frame_reads_.data() + k * stride;
    if (!same_frame(first, again.data(), k == 0) || returned(pending_.back().address))
      return torn(t);
    if (k == 0) std::memcpy(first, again.data(), stride);
  }
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const unsigned char* f = frame_reads_.data() + i * stride;
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
          if (!t.frames.empty()) t.frames.back().entry = true;
          continue;
        }
      } else {
        entry = f[L.frame_is_entry] != 0;
      }
      std::uint64_t instr = u64(f, L.frame_instr);
      std::uint64_t first = pending_[i].code + static_cast<std::uint64_t>(L.code_adaptive);
      if (instr >= first) instruction = static_cast<std::int64_t>((instr - first) / 2);
    }
    std::uint32_t index = 0;
    const std::string* linetable = nullptr;
    if (!code_at(pending_[i].code, code_blocks_.data() + i * code_size, index, linetable)) {
      // 3.13: an executable that is not a code object (a frame of a C trampoline).
      if (L.version >= 0x030d && i > 0) continue;
      return torn(t);
    }
    PyFrame pf;
    pf.code = index;
    pf.line = line_of(index, *linetable, instruction);
    pf.entry = entry;
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

bool PythonReader::torn(PyThreadStack& t) {
  t.frames.clear();
  t.frame_addresses.clear();
  t.frames_cut = 0;
  t.torn = true;
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

}  // namespace mainboard::sampling
