#include "sampling/perf_sampler.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "core/fs.hpp"
#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "symbols/perf_regs.hpp"

namespace mainboard::sampling {

namespace {

int perf_event_open(perf_event_attr* attr, pid_t pid, int cpu, int group, unsigned long flags) {
  return static_cast<int>(::syscall(SYS_perf_event_open, attr, pid, cpu, group, flags));
}

std::vector<int> online_cpus() {
  std::vector<int> cpus;
  // "0-3,6" in /sys/devices/system/cpu/online.
  if (auto list =
          core::parse_cpu_list(core::trim(read_proc_file("/sys/devices/system/cpu/online"))))
    for (auto c : *list)
      cpus.push_back(static_cast<int>(c));
  if (cpus.empty()) {
    long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < std::max(1L, n); ++c)
      cpus.push_back(c);
  }
  return cpus;
}

/// Enough descriptors for threads × CPUs events.
void raise_fd_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);
  }
}

std::string prot_string(std::uint32_t prot, std::uint32_t flags) {
  std::string s;
  s += (prot & 1) ? 'r' : '-';      // PROT_READ
  s += (prot & 2) ? 'w' : '-';      // PROT_WRITE
  s += (prot & 4) ? 'x' : '-';      // PROT_EXEC
  s += (flags & 0x01) ? 's' : 'p';  // MAP_SHARED
  return s;
}

}  // namespace

void trim_frame_pointer_loop(std::vector<std::uint64_t>& ips) {
  // The kernel stops a user chain at 127 entries (sysctl kernel.perf_event_max_stack); a loop
  // fills it with one address.
  constexpr std::size_t kNearTheLimit = 100, kRun = 16;
  if (ips.size() < kNearTheLimit) return;
  std::size_t first = ips.size() - 1;
  while (first > 0 && ips[first - 1] == ips.back())
    --first;
  if (ips.size() - first >= kRun) ips.resize(first + 1);
}

symbols::WalkStop choose_walk(const RawSample& s, symbols::CodeMap& code,
                              std::vector<std::uint64_t>& ips) {
  bool in_kernel = !s.ips.empty() && s.ips.front() == kKernelAddress;
  ips.assign(s.ips.begin() + (in_kernel ? 1 : 0), s.ips.end());
  auto stop = code.check(ips);
  if (!s.unwound.empty()) {
    std::vector<std::uint64_t> unwound = s.unwound;
    auto unwound_stop = code.check(unwound, &s.activations);
    if (unwound.size() > ips.size()) {  // the longer true walk
      ips = std::move(unwound);
      stop = unwound_stop;
    }
  }
  if (in_kernel) ips.insert(ips.begin(), kKernelAddress);
  return stop;
}

std::string explain_perf_error(int error, std::int32_t pid) {
  std::string paranoid(core::trim(read_proc_file("/proc/sys/kernel/perf_event_paranoid")));
  switch (error) {
    case EACCES:
    case EPERM:
      return "perf_event_open refused to sample process " + std::to_string(pid) + " (" +
             std::strerror(error) + "): kernel.perf_event_paranoid is " +
             (paranoid.empty() ? "unknown" : paranoid) +
             "; allow it with `sysctl kernel.perf_event_paranoid=1` (or run with CAP_PERFMON), and "
             "sample only "
             "processes of your own user";
    case ENOENT:
    case ENODEV:
      return "this kernel has no software CPU-clock perf event (" +
             std::string(std::strerror(error)) + ")";
    case ENOSYS:
      return "this kernel has no perf_event_open (built without CONFIG_PERF_EVENTS, or blocked by "
             "a seccomp filter)";
    case ESRCH: return "process " + std::to_string(pid) + " does not exist (any more)";
    case EMFILE:
      return "too many open files for one event per thread and CPU: raise the limit with `ulimit "
             "-n`";
    default: return "perf_event_open failed: " + std::string(std::strerror(error));
  }
}

std::size_t ring_pages(std::size_t bytes, std::size_t page, std::size_t limit) {
  if (page == 0) return 1;
  std::size_t pages = std::max<std::size_t>(1, bytes / page);
  while (pages & (pages - 1))
    ++pages;
  while (pages > 1 && (pages + 1) * page > limit)
    pages /= 2;
  return pages;
}

PerfSampler::PerfSampler(std::int32_t pid, const std::vector<std::int32_t>& tids,
                         const SamplerOptions& options, bool on_exec)
    : options_(options), pid_(pid) {
  raise_fd_limit();
  out_.processes.push_back(pid);
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = std::max<std::uint32_t>(options.hz, 1);
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  if (options.dwarf && symbols::perf_regs()) {
    attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = symbols::perf_regs()->mask;
    attr.sample_stack_user = (std::max<std::uint32_t>(options.stack_bytes, 512) + 7) & ~7u;
  }
  attr.disabled = 1;
  attr.enable_on_exec = on_exec ? 1 : 0;
  attr.inherit = 1;  // threads and processes the target starts
  attr.exclude_kernel = options.kernel ? 0 : 1;
  attr.exclude_hv = 1;
  attr.exclude_callchain_kernel = 1;
  attr.mmap = 1;
  attr.mmap_data = 1;  // every mapping, so each file's load address can be worked out
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  attr.sample_id_all = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.watermark = 1;
  attr.wakeup_watermark = 1;

  std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  auto close_all = [&] {
    for (auto& b : buffers_)
      ::munmap(b.base, b.size + page);
    buffers_.clear();
    for (int fd : fds_)
      ::close(fd);
    fds_.clear();
  };
  // What an ordinary user may lock; root (CAP_IPC_LOCK) may lock more, and larger rings ride
  // out a sampler thread the scheduler delays on a loaded machine (a ring of 512 KiB holds 30
  // stack copies: 30 ms at 499 Hz on two threads). Up to 8 MiB a CPU, 64 MiB in all.
  std::size_t user_pages = ring_pages(options.dwarf ? 512 << 10 : 256 << 10, page);
  std::size_t cpus = std::max<std::size_t>(online_cpus().size(), 1);
  std::size_t privileged_bytes =
      std::clamp<std::size_t>((64u << 20) / cpus, options.dwarf ? 512 << 10 : 256 << 10,
                              options.dwarf ? 8u << 20 : 2u << 20);
  std::size_t pages = options.buffer_pages ? options.buffer_pages
                      : ::geteuid() == 0 ? ring_pages(privileged_bytes, page, std::size_t{1} << 40)
                                         : user_pages;
  while (pages & (pages - 1))
    ++pages;  // a power of two
  // Opens an event per CPU and thread; 0, or the errno that stopped it (everything closed).
  auto open_all = [&]() -> int {
    for (int cpu : online_cpus()) {
      int leader = -1;
      for (auto tid : tids) {
        int fd = perf_event_open(&attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
          if (errno == ESRCH) continue;  // a thread that just ended
          int error = errno;
          close_all();
          return error;
        }
        fds_.push_back(fd);
        if (leader < 0) {
          leader = fd;
          void* base =
              ::mmap(nullptr, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
          if (base == MAP_FAILED) {
            int error = errno;
            close_all();
            return error;
          }
          buffers_.push_back({fd, base, pages * page});
        } else if (::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, leader) != 0) {
          int error = errno;
          close_all();
          return error;
        }
      }
    }
    return 0;
  };
  int error = open_all();
  if ((error == EPERM || error == ENOMEM) && pages > user_pages && !options.buffer_pages) {
    pages = user_pages;  // root without CAP_IPC_LOCK (a container): what anyone may lock
    error = open_all();
  }
  if ((error == EACCES || error == EPERM) && !attr.exclude_kernel) {
    // Kernel time needs kernel.perf_event_paranoid <= 1 (or CAP_PERFMON): user time still can.
    attr.exclude_kernel = 1;
    error = open_all();
    if (error == 0) {
      std::string paranoid(core::trim(read_proc_file("/proc/sys/kernel/perf_event_paranoid")));
      out_.notes.push_back(
          "kernel time: not sampled, only user code (kernel.perf_event_paranoid is " +
          (paranoid.empty() ? std::string("unknown") : paranoid) +
          "; `sysctl kernel.perf_event_paranoid=1` or CAP_PERFMON adds system calls and page "
          "faults)");
    }
  }
  if (error != 0) throw Error(explain_perf_error(error, pid));
  if (fds_.empty()) throw Error(explain_perf_error(ESRCH, pid));
  if (!on_exec)
    for (int fd : fds_)
      ::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

PerfSampler::~PerfSampler() {
  for (auto& b : buffers_)
    ::munmap(b.base, b.size + static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)));
  for (int fd : fds_)
    ::close(fd);
}

void PerfSampler::seed_from_proc(std::int32_t pid) {
  if (std::find(out_.processes.begin(), out_.processes.end(), pid) == out_.processes.end())
    out_.processes.push_back(pid);
  auto maps = parse_maps(read_proc_file("/proc/" + std::to_string(pid) + "/maps"));
  ++file_maps_changed_[pid];
  auto& list = out_.mappings[pid];
  list.insert(list.end(), maps.begin(), maps.end());
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::int32_t tid = 0;
    auto name = e.path().filename().string();
    if (!core::parse_u64(name)) continue;
    tid = static_cast<std::int32_t>(*core::parse_u64(name));
    out_.thread_process[tid] = pid;
    out_.thread_names[tid] = std::string(core::trim(read_proc_file(e.path().string() + "/comm")));
  }
}

void PerfSampler::handle(const unsigned char* p, std::size_t size) {
  perf_event_header h;
  std::memcpy(&h, p, sizeof h);
  const unsigned char* body = p + sizeof h;
  const unsigned char* end = p + size;
  auto u32 = [&](const unsigned char*& q) {
    std::uint32_t v = 0;
    if (q + 4 <= end) std::memcpy(&v, q, 4);
    q += 4;
    return v;
  };
  auto u64 = [&](const unsigned char*& q) {
    std::uint64_t v = 0;
    if (q + 8 <= end) std::memcpy(&v, q, 8);
    q += 8;
    return v;
  };
  switch (h.type) {
    case PERF_RECORD_SAMPLE: {
      const unsigned char* q = body;
      RawSample s;
      bool in_kernel = (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
      std::uint64_t ip = u64(q);
      s.pid = static_cast<std::int32_t>(u32(q));
      s.tid = static_cast<std::int32_t>(u32(q));
      s.t_ns = static_cast<std::int64_t>(u64(q));
      std::uint64_t nr = u64(q);
      if (nr > 4096 || q + nr * 8 > end) nr = 0;  // malformed: keep the ip alone
      for (std::uint64_t i = 0; i < nr; ++i) {
        std::uint64_t a = u64(q);
        if (a >= static_cast<std::uint64_t>(PERF_CONTEXT_MAX)) continue;  // context markers
        s.ips.push_back(a);
      }
      if (s.ips.empty() && !in_kernel) s.ips.push_back(ip);
      trim_frame_pointer_loop(s.ips);
      const auto* layout = symbols::perf_regs();
      if (options_.dwarf && layout && q + 8 <= end) {
        // Registers (an ABI word, then the masked registers), then the stack copy (its size,
        // the bytes, and how many of them are valid).
        std::uint64_t abi = u64(q);
        regs_.clear();
        if (abi != 0)
          for (std::size_t i = 0; i < layout->count && q + 8 <= end; ++i)
            regs_.push_back(u64(q));
        std::uint64_t copied = q + 8 <= end ? u64(q) : 0;
        const unsigned char* data = q;
        q += copied;
        std::uint64_t valid = copied && q + 8 <= end ? u64(q) : 0;
        if (regs_.size() == layout->count && valid > 0 && valid <= copied && data + valid <= end) {
          stack_.assign(data, data + valid);
          auto& unwinder = unwinders_[s.pid];
          auto changed = file_maps_changed_[s.pid];
          auto rebuild = [&] {
            unwinder = std::make_unique<Symbolizer>();
            unwinder->set_mappings(out_.mappings[s.pid]);
            unwinder_built_at_[s.pid] = changed;
          };
          if (!unwinder) rebuild();
          auto pcs = unwinder->unwind(s.tid, regs_, stack_, &s.activations);
          // Rebuilt only when files were mapped since and the walk stopped in code the unwinder
          // does not know: a program that loads hundreds of libraries (import torch) would
          // otherwise have every module re-read, and its CFI parsed again, at each of them.
          if (unwinder_built_at_[s.pid] != changed &&
              (pcs.empty() || !unwinder->covers(pcs.back()))) {
            rebuild();
            pcs = unwinder->unwind(s.tid, regs_, stack_, &s.activations);
          }
          s.unwound = std::move(pcs);
        }
      }
      // The user chain of a sample taken in the kernel starts where the thread entered it.
      if (in_kernel) s.ips.insert(s.ips.begin(), kKernelAddress);
      if (out_.samples.size() >= options_.max_samples) {
        ++out_.lost;
        return;
      }
      out_.thread_process.emplace(s.tid, s.pid);
      out_.samples.push_back(std::move(s));
      return;
    }
    case PERF_RECORD_MMAP2: {
      const unsigned char* q = body;
      auto pid = static_cast<std::int32_t>(u32(q));
      u32(q);  // tid
      Mapping m;
      m.start = u64(q);
      m.end = m.start + u64(q);
      m.offset = u64(q);
      u32(q);  // maj
      u32(q);  // min
      m.inode = u64(q);
      u64(q);  // inode generation
      std::uint32_t prot = u32(q), flags = u32(q);
      m.perms = prot_string(prot, flags);
      if (q < end)
        m.path = std::string(reinterpret_cast<const char*>(q),
                             strnlen(reinterpret_cast<const char*>(q), end - q));
      if (!m.path.empty() && m.path[0] == '/') ++file_maps_changed_[pid];
      out_.mappings[pid].push_back(std::move(m));
      return;
    }
    case PERF_RECORD_COMM: {
      const unsigned char* q = body;
      auto pid = static_cast<std::int32_t>(u32(q));
      auto tid = static_cast<std::int32_t>(u32(q));
      if (h.misc & PERF_RECORD_MISC_COMM_EXEC) {  // a new address space
        out_.mappings[pid].clear();
        ++file_maps_changed_[pid];
        unwinders_.erase(pid);  // its modules are gone, whatever addresses they covered
      }
      if (q < end)
        out_.thread_names[tid] = std::string(reinterpret_cast<const char*>(q),
                                             strnlen(reinterpret_cast<const char*>(q), end - q));
      out_.thread_process[tid] = pid;
      return;
    }
    case PERF_RECORD_FORK: {
      const unsigned char* q = body;
      auto pid = static_cast<std::int32_t>(u32(q));
      auto ppid = static_cast<std::int32_t>(u32(q));
      auto tid = static_cast<std::int32_t>(u32(q));
      out_.thread_process[tid] = pid;
      if (pid != ppid) {
        // A new process: it starts with its parent's mappings and name.
        if (std::find(out_.processes.begin(), out_.processes.end(), pid) == out_.processes.end())
          out_.processes.push_back(pid);
        out_.mappings[pid] = out_.mappings[ppid];
        ++file_maps_changed_[pid];
      }
      auto parent_name = out_.thread_names.find(ppid);
      if (parent_name != out_.thread_names.end() && !out_.thread_names.count(tid))
        out_.thread_names[tid] = parent_name->second;
      return;
    }
    case PERF_RECORD_LOST: {
      const unsigned char* q = body;
      u64(q);  // id
      out_.lost += u64(q);
      return;
    }
    default: return;
  }
}

void PerfSampler::drain() {
  std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  // Past this much waiting, records are handled as they are read (the old way): memory stays
  // bounded even when unwinding never catches up.
  constexpr std::size_t kMaxPending = 256u << 20;
  for (auto& b : buffers_) {
    auto* meta = static_cast<perf_event_mmap_page*>(b.base);
    auto* data = static_cast<unsigned char*>(b.base) + page;
    std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    std::uint64_t tail = meta->data_tail;
    while (tail < head) {
      perf_event_header h;
      std::size_t at = tail % b.size;
      // A record (even its header) may wrap around the end of the buffer: copy it in two parts.
      auto copy = [&](unsigned char* to, std::size_t n) {
        std::size_t first = std::min(n, b.size - at);
        std::memcpy(to, data + at, first);
        std::memcpy(to + first, data, n - first);
      };
      copy(reinterpret_cast<unsigned char*>(&h), sizeof h);
      if (h.size < sizeof h || tail + h.size > head) break;
      if (pending_.size() - pending_at_ < kMaxPending) {
        auto where = pending_.size();
        pending_.resize(where + h.size);
        copy(pending_.data() + where, h.size);
      } else {
        scratch_.resize(h.size);
        copy(scratch_.data(), h.size);
        handle(scratch_.data(), h.size);
      }
      tail += h.size;
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  }
  handle_pending(drain_interval());
}

void PerfSampler::handle_pending(std::chrono::steady_clock::duration budget) {
  auto now = std::chrono::steady_clock::now();
  auto until = budget >= std::chrono::steady_clock::time_point::max() - now
                   ? std::chrono::steady_clock::time_point::max()
                   : now + budget;
  while (pending_at_ < pending_.size()) {
    perf_event_header h;
    std::memcpy(&h, pending_.data() + pending_at_, sizeof h);
    handle(pending_.data() + pending_at_, h.size);
    pending_at_ += h.size;
    if (std::chrono::steady_clock::now() >= until) break;
  }
  if (pending_at_ == pending_.size()) {
    pending_.clear();
    pending_at_ = 0;
  } else if (pending_at_ > pending_.size() / 2) {
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(pending_at_));
    pending_at_ = 0;
  }
}

std::chrono::milliseconds PerfSampler::drain_interval() const {
  // A frame-pointer sample is a few hundred bytes; a dwarf one carries its stack copy.
  double bytes = 512.0 + (options_.dwarf ? options_.stack_bytes : 0);
  double buffer = buffers_.empty() ? 0.0 : static_cast<double>(buffers_.front().size);
  double fill_ms = buffer / (bytes * std::max<double>(options_.hz, 1.0)) * 1000.0;
  return std::chrono::milliseconds(std::clamp(static_cast<long>(fill_ms / 4), 1L, 25L));
}

SamplerOutput PerfSampler::finish() {
  if (!finished_) {
    finished_ = true;
    for (int fd : fds_)
      ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    drain();
    handle_pending(std::chrono::steady_clock::duration::max());
  }
  std::stable_sort(out_.samples.begin(), out_.samples.end(),
                   [](const RawSample& a, const RawSample& b) { return a.t_ns < b.t_ns; });
  return std::move(out_);
}

SamplerOutput PerfSampler::take() {
  drain();
  handle_pending(std::chrono::steady_clock::duration::max());
  SamplerOutput chunk;
  chunk.samples = std::move(out_.samples);
  out_.samples.clear();
  std::stable_sort(chunk.samples.begin(), chunk.samples.end(),
                   [](const RawSample& a, const RawSample& b) { return a.t_ns < b.t_ns; });
  chunk.mappings = out_.mappings;
  chunk.thread_names = out_.thread_names;
  chunk.thread_process = out_.thread_process;
  chunk.processes = out_.processes;
  chunk.lost = out_.lost - lost_taken_;
  lost_taken_ = out_.lost;
  chunk.notes = out_.notes;
  return chunk;
}

}  // namespace mainboard::sampling
