#pragma once

/// The machine over time: what `mainboard top` draws, and writes as one JSON line per interval.
/// A MachineWatch reads what changes (each CPU's use, memory, the cgroup, pressure, package power,
/// every GPU, the processes on them) and turns counters into rates over the time since its
/// previous reading; a LiveView keeps a short history of frames and draws one as text lines.

#include <cstdint>
#include <deque>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mainboard/cgroup.hpp"
#include "mainboard/export.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/pressure.hpp"
#include "mainboard/reading.hpp"

namespace mainboard {

class Machine;

/// One logical CPU's use over the last interval, in percent of that interval (all CPUs
/// together for the host's line: `cpu` is then -1).
struct MAINBOARD_API CpuUse {
  int cpu = -1;
  double busy_pct = 0;    ///< everything but idle and I/O wait
  double user_pct = 0;    ///< user and nice
  double system_pct = 0;  ///< system, IRQ and soft IRQ
  double iowait_pct = 0;
  double steal_pct = 0;  ///< taken by the hypervisor
  bool operator==(const CpuUse&) const = default;
};

/// A process in the live view.
struct MAINBOARD_API LiveProcess {
  std::uint32_t pid = 0;  ///< as this PID namespace knows it (the driver's, when not visible)
  std::uint32_t ppid = 0;
  std::string user;
  std::string name;     ///< the kernel's short name for it
  std::string command;  ///< its command line, words separated by spaces
  /// Its CPU time over the last interval, in percent of one CPU (above 100 for several
  /// threads at once); empty in the first frame or for a process first seen in this one.
  std::optional<double> cpu_pct;
  std::uint64_t rss_bytes = 0;
  double elapsed_s = 0;
  std::uint32_t threads = 0;
  /// The GPUs (their indices) it has a context on, and the GPU memory it holds on them, where
  /// the driver says.
  std::vector<std::uint32_t> gpus;
  std::optional<std::uint64_t> gpu_memory_bytes;
  /// False for a GPU's process in a PID namespace this one cannot see into: only the driver's
  /// PID and memory are known.
  bool visible = true;
  bool operator==(const LiveProcess&) const = default;
};

/// A GPU in the live view: its reading, and what moved since the watch began.
struct MAINBOARD_API LiveGpu {
  GpuSnapshot reading;
  /// ECC errors and XIDs counted since the watch's first reading (empty where not reported).
  std::optional<std::uint64_t> ecc_corrected_since_start;
  std::optional<std::uint64_t> ecc_uncorrected_since_start;
  std::optional<std::uint64_t> xids_since_start;
  /// NVLink payload over the last interval, all links summed (empty without NVLink counters
  /// or in the first frame).
  std::optional<double> nvlink_tx_bytes_per_s;
  std::optional<double> nvlink_rx_bytes_per_s;
  bool operator==(const LiveGpu&) const = default;
};

/// Everything the live view shows, at one moment.
struct MAINBOARD_API LiveFrame {
  std::uint64_t sequence = 0;  ///< 0 for the first frame of a watch
  double unix_s = 0;           ///< when it was read
  double interval_s = 0;       ///< since the frame before (0 for the first)
  std::string hostname;
  std::optional<double> uptime_s;
  /// Every CPU together; empty in the first frame or where /proc/stat cannot be read.
  std::optional<CpuUse> cpu_total;
  std::vector<CpuUse> cpus;  ///< each online CPU (empty in the first frame)
  std::optional<double> load_1m, load_5m, load_15m;
  Reading<Memory> memory;
  std::uint64_t swap_total_bytes = 0;
  std::uint64_t swap_used_bytes = 0;
  Reading<CgroupMemory> cgroup_memory;
  Reading<Pressure> pressure;
  /// Every CPU package's power over the interval (RAPL), and the hottest package sensor.
  std::optional<double> cpu_power_w;
  std::optional<double> cpu_temperature_c;
  std::vector<LiveGpu> gpus;
  std::vector<NpuSnapshot> npus;
  /// The GPUs' processes; every process when the watch lists all.
  std::vector<LiveProcess> processes;
  bool all_processes = false;
  bool operator==(const LiveFrame&) const = default;
};

MAINBOARD_API void to_json(nlohmann::json& j, const CpuUse& value);
MAINBOARD_API void from_json(const nlohmann::json& j, CpuUse& value);
MAINBOARD_API void to_json(nlohmann::json& j, const LiveProcess& value);
MAINBOARD_API void from_json(const nlohmann::json& j, LiveProcess& value);
MAINBOARD_API void to_json(nlohmann::json& j, const LiveGpu& value);
MAINBOARD_API void from_json(const nlohmann::json& j, LiveGpu& value);
MAINBOARD_API void to_json(nlohmann::json& j, const LiveFrame& value);
MAINBOARD_API void from_json(const nlohmann::json& j, LiveFrame& value);

/// Reads a machine's changing state again and again. What cannot change (the CPU list, the
/// GPUs, user names) is read once.
class MAINBOARD_API MachineWatch {
 public:
  explicit MachineWatch(const Machine& machine, bool all_processes = false);
  ~MachineWatch();
  MachineWatch(const MachineWatch&) = delete;
  MachineWatch& operator=(const MachineWatch&) = delete;

  /// Reads now. Rates (CPU use, a process's CPU share, power, NVLink) are over the time since
  /// the previous call, so the first frame has none.
  LiveFrame next();
  /// List every process, or only the GPUs' (from the next frame).
  void list_all_processes(bool all);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// How a LiveView draws a frame.
struct MAINBOARD_API LiveViewOptions {
  int width = 80;
  int height = 24;  ///< lines to fill; 0: as many as the frame needs
  bool color = false;
  /// The process table's order: "pid", "user", "gpu_memory", "cpu", "memory", "time",
  /// "command"; largest first unless `ascending`.
  std::string sort = "gpu_memory";
  bool ascending = false;
  std::string filter;                         ///< only processes whose command or user holds it
  std::optional<std::uint32_t> gpu;           ///< only this GPU's processes
  bool tree = false;                          ///< processes under their parents
  std::optional<std::uint32_t> selected_pid;  ///< the highlighted row
  bool expand_selected = false;               ///< the selected process's whole command line
  bool paused = false;
  bool help = false;        ///< the keys, over the frame
  bool interactive = true;  ///< the last line names the keys (unless `status` says more)
  std::string status;       ///< a line of the caller's at the bottom (an error, the filter typed)
};

/// The keys of the full-screen view, as its help shows them.
MAINBOARD_API const std::vector<std::pair<std::string, std::string>>& live_view_keys();

/// Frames and their recent history (the sparklines), drawn as lines of text.
class MAINBOARD_API LiveView {
 public:
  /// Keeps `history` frames' worth of the figures the sparklines draw.
  explicit LiveView(std::size_t history = 60);
  void add(const LiveFrame& frame);
  const LiveFrame* last() const { return frames_ ? &last_ : nullptr; }
  /// The last frame as lines no wider than options.width (ANSI colour when options.color).
  std::vector<std::string> render(const LiveViewOptions& options) const;
  /// The processes of the table, in the order and with the filter the options ask for.
  std::vector<const LiveProcess*> rows(const LiveViewOptions& options) const;

 private:
  std::size_t history_;
  std::size_t frames_ = 0;
  LiveFrame last_;
  std::deque<double> cpu_busy_;
  std::vector<std::deque<double>> gpu_util_, gpu_memory_;
};

}  // namespace mainboard
