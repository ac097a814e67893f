#include "symbols/code_map.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace mainboard::symbols {

namespace {

/// The most bytes a call instruction takes (x86-64: a prefix, FF, ModRM, SIB and a 32-bit
/// displacement).
constexpr std::size_t kCallBytes = 8;
/// Code files kept open per process (one per library a stack runs through).
constexpr std::size_t kMaxFiles = 512;

}  // namespace

const char* to_string(WalkStop stop) {
  switch (stop) {
    case WalkStop::none: return "none";
    case WalkStop::outside_code: return "at an address outside any code";
    case WalkStop::not_after_call: return "at a return address that follows no call";
  }
  return "?";
}

bool ends_with_call(const unsigned char* b, std::size_t n) {
#if defined(__x86_64__)
  // call rel32: E8 and four bytes.
  if (n >= 5 && b[n - 5] == 0xE8) return true;
  // call r/m64: FF /2, the ModRM byte (with a SIB byte and a displacement per its mode) making
  // up exactly the bytes up to the return address. Prefixes (REX, notrack) come before the FF.
  for (std::size_t length = 2; length <= 7 && length <= n; ++length) {
    const unsigned char* insn = b + n - length;
    if (insn[0] != 0xFF) continue;
    unsigned modrm = insn[1], mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
    if (reg != 2) continue;
    std::size_t want = 2;
    if (mod != 3 && rm == 4) {
      if (length < 3) continue;
      ++want;                                         // SIB
      if (mod == 0 && (insn[2] & 7) == 5) want += 4;  // no base: a 32-bit displacement
    }
    if (mod == 0 && rm == 5) want += 4;  // RIP-relative
    if (mod == 1) want += 1;
    if (mod == 2) want += 4;
    if (want == length) return true;
  }
  return false;
#elif defined(__aarch64__)
  if (n < 4) return true;
  std::uint32_t insn = 0;
  std::memcpy(&insn, b + n - 4, 4);
  return (insn & 0xFC000000u) == 0x94000000u ||  // BL
         (insn & 0xFFFFFC1Fu) == 0xD63F0000u ||  // BLR
         (insn & 0xFFFFF81Fu) == 0xD63F081Fu ||  // BLRAAZ, BLRABZ
         (insn & 0xFFFFF800u) == 0xD73F0800u;    // BLRAA, BLRAB
#else
  (void)b;
  (void)n;
  return true;  // not checked on this machine
#endif
}

CodeMap::CodeMap(std::int32_t pid, const std::vector<Mapping>& mappings,
                 const std::vector<JitSymbol>& jit)
    : pid_(pid) {
  // Later mappings replace what they cover of earlier ones (perf reports each mmap, never an
  // munmap): only what is executable in the end is kept.
  std::map<std::uint64_t, Range> painted;
  for (const auto& m : mappings) {
    if (m.end <= m.start) continue;
    // Cut what [m.start, m.end) overlaps out of the ranges already there.
    auto it = painted.lower_bound(m.start);
    if (it != painted.begin() && std::prev(it)->second.end > m.start) --it;
    while (it != painted.end() && it->second.start < m.end) {
      Range r = it->second;
      it = painted.erase(it);
      if (r.start < m.start) {
        Range left = r;
        left.end = m.start;
        painted.emplace(left.start, left);
      }
      if (r.end > m.end) {
        Range right = r;
        right.offset += m.end - r.start;
        right.start = m.end;
        painted.emplace(right.start, right);
      }
    }
    if (m.perms.size() >= 3 && m.perms[2] == 'x')
      painted.emplace(m.start, Range{m.start, m.end, m.offset, m.path});
  }
  // Code perf did not see made executable: in the gaps of what is painted.
  auto fill = [&](Range r) {
    auto it = painted.upper_bound(r.start);
    if (it != painted.begin() && std::prev(it)->second.end > r.start) --it;
    for (std::uint64_t at = r.start; at < r.end;) {
      while (it != painted.end() && it->second.end <= at)
        ++it;
      std::uint64_t gap_end = it == painted.end() ? r.end : std::min(r.end, it->second.start);
      if (gap_end > at) {
        Range piece = r;
        piece.offset += at - r.start;
        piece.start = at;
        piece.end = gap_end;
        painted.emplace(at, piece);
      }
      if (it == painted.end()) break;
      at = std::max(gap_end, it->second.end);
    }
  };
  for (const auto& j : jit)
    if (j.size) fill(Range{j.start, j.start + j.size, 0, ""});
  for (const auto& m : parse_maps(read_proc_file("/proc/" + std::to_string(pid) + "/maps")))
    if (m.perms.size() >= 3 && m.perms[2] == 'x') fill(Range{m.start, m.end, m.offset, m.path});
  ranges_.reserve(painted.size());
  for (auto& [start, r] : painted)
    ranges_.push_back(std::move(r));
}

CodeMap::~CodeMap() {
  for (auto& [path, fd] : files_)
    if (fd >= 0) ::close(fd);
}

const CodeMap::Range* CodeMap::find(std::uint64_t address) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                             [](std::uint64_t a, const Range& r) { return a < r.start; });
  if (it == ranges_.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

bool CodeMap::executable(std::uint64_t address) const {
  return find(address) != nullptr;
}

bool CodeMap::read_before(const Range& r, std::uint64_t address, unsigned char* into,
                          std::size_t n) {
  std::uint64_t from = address - n;
  if (!r.path.empty() && r.path[0] == '/') {
    // The file, as the process sees it (its mount namespace) while it lives, else by its name.
    auto [at, fresh] = files_.try_emplace(r.path, -1);
    if (fresh) {
      if (files_.size() > kMaxFiles) return false;
      std::string own = "/proc/" + std::to_string(pid_) + "/root" + r.path;
      int fd = ::open(own.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) fd = ::open(r.path.c_str(), O_RDONLY | O_CLOEXEC);
      at->second = fd;
    }
    if (at->second < 0) return false;
    auto offset = static_cast<off_t>(r.offset + (from - r.start));
    return ::pread(at->second, into, n, offset) == static_cast<ssize_t>(n);
  }
  // Anonymous code (a JIT's) and the vDSO: from the process, while it lives.
  iovec local{into, n};
  iovec remote{reinterpret_cast<void*>(from), n};
  return ::process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

bool CodeMap::after_call(std::uint64_t address) {
  if (auto it = calls_.find(address); it != calls_.end()) return it->second;
  bool call = true;  // what cannot be read is not held against the frame
  if (const Range* r = find(address - 1)) {
    std::size_t n = std::min<std::uint64_t>(kCallBytes, address - r->start);
    unsigned char bytes[kCallBytes];
    if (n && read_before(*r, address, bytes, n)) call = ends_with_call(bytes, n);
  }
  calls_.emplace(address, call);
  return call;
}

WalkStop CodeMap::stop_at(std::uint64_t address, bool return_address) {
  // A return address is checked as the call before it (one byte back); a leaf as itself.
  if (!executable(return_address ? address - 1 : address)) return WalkStop::outside_code;
  if (return_address && !after_call(address)) return WalkStop::not_after_call;
  return WalkStop::none;
}

WalkStop CodeMap::check(std::vector<std::uint64_t>& ips, const std::vector<bool>* activations,
                        std::uint64_t kernel_marker) {
  for (std::size_t i = 0; i < ips.size(); ++i) {
    std::uint64_t a = ips[i];
    if (kernel_marker && a == kernel_marker) continue;
    bool leaf = i == 0 || (i == 1 && kernel_marker && ips[0] == kernel_marker);
    if (leaf) continue;  // where the processor was: code, whatever perf recorded of its mapping
    bool activation = activations && i < activations->size() && (*activations)[i];
    if (auto stop = stop_at(a, !activation); stop != WalkStop::none) {
      ips.resize(i);
      return stop;
    }
  }
  return WalkStop::none;
}

}  // namespace mainboard::symbols
