#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "core/fs.hpp"
#include "core/interrupts.hpp"
#include "core/process.hpp"
#include "core/region_energy.hpp"
#include "mainboard/error.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/meter.hpp"
#include "meter/process_tree.hpp"

extern char** environ;

namespace mainboard {

namespace {

double seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6;
}

/// While the command runs, the terminal's interrupt and quit keys are for it, not for us: we
/// keep measuring and report how it ended (as time(1) does). A caller that catches them (the
/// command line, into core::InterruptHandlers) keeps its handlers.
class IgnoreTerminalSignals {
 public:
  IgnoreTerminalSignals() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    for (int s : {SIGINT, SIGQUIT}) {
      struct sigaction now {};
      if (sigaction(s, nullptr, &now) == 0 && now.sa_handler == SIG_DFL &&
          !(now.sa_flags & SA_SIGINFO) && sigaction(s, &ignore, nullptr) == 0)
        ignored_.push_back(s);
    }
  }
  ~IgnoreTerminalSignals() {
    struct sigaction restore {};
    restore.sa_handler = SIG_DFL;
    sigemptyset(&restore.sa_mask);
    for (int s : ignored_)
      sigaction(s, &restore, nullptr);
  }

 private:
  std::vector<int> ignored_;
};

/// A descriptor that becomes readable when the process exits (Linux 5.3+), so the sampler wakes
/// at once instead of at the next tick. -1 when the kernel has no pidfd_open.
int pidfd_for(pid_t pid) {
#ifdef SYS_pidfd_open
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  return fd >= 0 ? static_cast<int>(fd) : -1;
#else
  (void)pid;
  return -1;
#endif
}

}  // namespace

CommandMeasurement measure_command(const Machine& machine, const std::vector<std::string>& argv,
                                   const MeterOptions& options) {
  if (argv.empty() || argv[0].empty()) throw Error("no command to run");
  core::check_arguments(argv);
  const char* path = std::getenv("PATH");
  auto found = core::find_program(argv[0], path ? path : "/usr/local/bin:/usr/bin:/bin");
  if (!found) core::throw_not_runnable(argv[0]);
  std::string exe = *found;
  CommandMeasurement m;
  m.argv = argv;
  m.interval_ms = static_cast<double>(options.interval.count());

  rusage before{};
  ::getrusage(RUSAGE_CHILDREN, &before);
  std::vector<std::string> args(argv.begin(), argv.end());
  std::vector<char*> cargs;
  for (auto& a : args)
    cargs.push_back(a.data());
  cargs.push_back(nullptr);

  // The counters' first reading, just before the command starts.
  detail::EnergyTracker energy(machine, options.gpus);
  IgnoreTerminalSignals ignore;
  // The child gets default signal dispositions back: ours are ignored for the duration.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, exe.c_str(), nullptr, &attr, cargs.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) core::throw_exec_failed(argv[0], rc);

  core::Fs proc("/");
  const std::uint64_t own_high_water =
      proctree::kib_field(proc.read("/proc/self/status").value_or(""), "VmHWM").value_or(0) * 1024;
  const long page = ::sysconf(_SC_PAGESIZE);
  int pidfd = pidfd_for(pid);
  int status = 0;
  rusage leader{};
  // Asked to stop (the caller's interrupt handlers): the tree is signalled step by step.
  core::Ending ending(options.kill_after_s);
  std::vector<int> last_tree{pid};
  std::map<int, std::uint64_t> high_water;  // each process's VmHWM, the last one read
  bool leader_sampled = false;
  while (true) {
    auto tree = proctree::process_tree(proc, pid);
    if (!tree.empty()) {
      last_tree.clear();
      for (const auto& p : tree)
        last_tree.push_back(static_cast<int>(p.pid));
      ++m.samples;
      // A process that shares its parent's address space (a vfork child before exec, a task
      // cloned with CLONE_VM) holds no pages of its own: its parent's are counted once.
      std::vector<bool> own_memory(tree.size(), true);
      for (std::size_t i = 0; i < tree.size(); ++i)
        if (i > 0 && proctree::share_address_space(tree[i].ppid, tree[i].pid))
          own_memory[i] = false;
      std::uint64_t rss = 0;
      std::set<std::uint32_t> pids;
      for (std::size_t i = 0; i < tree.size(); ++i) {
        if (own_memory[i]) rss += tree[i].rss_pages * static_cast<std::uint64_t>(page);
        pids.insert(static_cast<std::uint32_t>(tree[i].pid));
      }
      m.peak_tree_rss_bytes = std::max(m.peak_tree_rss_bytes, rss);
      // Proportional set sizes (shared pages in shares) and each process's own high-water mark.
      std::uint64_t pss = 0;
      bool any_pss = false;
      for (std::size_t i = 0; i < tree.size(); ++i) {
        if (!own_memory[i]) continue;
        const auto& p = tree[i];
        std::string dir = "/proc/" + std::to_string(p.pid);
        if (auto v = proctree::kib_field(proc.read(dir + "/smaps_rollup").value_or(""), "Pss")) {
          pss += *v * 1024;
          any_pss = true;
        }
        if (auto hwm = proctree::kib_field(proc.read(dir + "/status").value_or(""), "VmHWM")) {
          auto& seen = high_water[p.pid];
          seen = std::max(seen, *hwm * 1024);
          if (p.pid == pid) leader_sampled = true;
        }
      }
      if (any_pss) m.peak_pss_bytes = std::max(m.peak_pss_bytes, pss);
      m.peak_processes = std::max(m.peak_processes, static_cast<std::uint32_t>(tree.size()));
      if (options.gpus) {
        std::uint64_t total = 0;
        bool any = false;
        for (const auto& gpu : machine.gpus()) {
          std::uint64_t on_gpu = 0;
          for (const auto& proc_on_gpu : gpu->processes())
            // /proc numbers the tree as the driver does where this process sees the host's
            // PIDs (a namespace of its own under the host's /proc): either PID may match.
            if ((pids.count(proc_on_gpu.pid) ||
                 (proc_on_gpu.host_pid && pids.count(*proc_on_gpu.host_pid))) &&
                proc_on_gpu.used_memory_bytes)
              on_gpu += *proc_on_gpu.used_memory_bytes;
          any = true;
          auto& peak =
              m.peak_gpu_bytes_by_gpu[gpu->uuid().empty() ? std::to_string(gpu->info().index)
                                                          : gpu->uuid()];
          peak = std::max(peak, on_gpu);
          total += on_gpu;
        }
        if (any) m.peak_gpu_bytes = std::max(m.peak_gpu_bytes.value_or(0), total);
      }
    }
    energy.sample_if_due();
    ending.tick([&] { return last_tree; });
    pid_t r = ::wait4(pid, &status, WNOHANG, &leader);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw Error("waiting for " + exe + ": " + std::strerror(errno));
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(options.interval.count()));
    } else {
      ::usleep(static_cast<useconds_t>(options.interval.count() * 1000));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  if (ending.began())  // what the command started and left running is not left behind
    for (int p : last_tree)
      if (p != pid) ::kill(p, SIGKILL);
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  energy.sample();
  m.energy = energy.result(m.wall_s);

  rusage after{};
  ::getrusage(RUSAGE_CHILDREN, &after);
  // RUSAGE_CHILDREN adds up every descendant that was waited for; the difference is ours.
  m.user_s = seconds(after.ru_utime) - seconds(before.ru_utime);
  m.system_s = seconds(after.ru_stime) - seconds(before.ru_stime);
  // The largest single process: each one's own VmHWM, read while it lived. getrusage's maxima
  // would count this program's copy between fork and exec (its memory is the child's until
  // exec), so they stand in only for a command no sample saw.
  std::uint64_t largest = 0;
  for (const auto& [p, bytes] : high_water)
    largest = std::max(largest, bytes);
  // The command's own getrusage maximum is at least this program's high-water mark (the copy it
  // was until exec); above that, it is the command's, from a peak no sample caught.
  auto leader_max = static_cast<std::uint64_t>(leader.ru_maxrss) * 1024;
  if (!leader_sampled || leader_max > own_high_water) largest = std::max(largest, leader_max);
  m.max_process_rss_bytes = largest;
  m.major_faults = static_cast<std::uint64_t>(after.ru_majflt - before.ru_majflt);
  m.minor_faults = static_cast<std::uint64_t>(after.ru_minflt - before.ru_minflt);
  m.voluntary_switches = static_cast<std::uint64_t>(after.ru_nvcsw - before.ru_nvcsw);
  m.involuntary_switches = static_cast<std::uint64_t>(after.ru_nivcsw - before.ru_nivcsw);
  m.fs_inputs = static_cast<std::uint64_t>(after.ru_inblock - before.ru_inblock);
  m.fs_outputs = static_cast<std::uint64_t>(after.ru_oublock - before.ru_oublock);
  m.peak_rss_bytes = std::max(m.peak_tree_rss_bytes, m.max_process_rss_bytes);
  auto ended = core::exit_status(status);
  m.exit_code = ended.exit_code;
  if (ended.signal) m.signal = ended.signal;
  return m;
}

}  // namespace mainboard
