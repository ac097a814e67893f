// JSON of the live view's models (mainboard/live.hpp): `mainboard top --json` writes a frame a
// line. Compiled into mainboard::mainboard, beside the watch that makes them.
#include "mainboard/live.hpp"
#include "model/json_fields.hpp"

namespace mainboard {

template <class V>
void fields(V& v, CpuUse& m) {
  v("cpu", m.cpu);
  v("busy_pct", m.busy_pct);
  v("user_pct", m.user_pct);
  v("system_pct", m.system_pct);
  v("iowait_pct", m.iowait_pct);
  v("steal_pct", m.steal_pct);
}
MAINBOARD_DEFINE_JSON(CpuUse)

template <class V>
void fields(V& v, LiveProcess& m) {
  v("pid", m.pid);
  v("ppid", m.ppid);
  v("user", m.user);
  v("name", m.name);
  v("command", m.command);
  v("cpu_pct", m.cpu_pct);
  v("rss_bytes", m.rss_bytes);
  v("elapsed_s", m.elapsed_s);
  v("threads", m.threads);
  v("gpus", m.gpus);
  v("gpu_memory_bytes", m.gpu_memory_bytes);
  v("visible", m.visible);
}
MAINBOARD_DEFINE_JSON(LiveProcess)

template <class V>
void fields(V& v, LiveGpu& m) {
  v("reading", m.reading);
  v("ecc_corrected_since_start", m.ecc_corrected_since_start);
  v("ecc_uncorrected_since_start", m.ecc_uncorrected_since_start);
  v("xids_since_start", m.xids_since_start);
  v("nvlink_tx_bytes_per_s", m.nvlink_tx_bytes_per_s);
  v("nvlink_rx_bytes_per_s", m.nvlink_rx_bytes_per_s);
}
MAINBOARD_DEFINE_JSON(LiveGpu)

template <class V>
void fields(V& v, LiveFrame& m) {
  v("sequence", m.sequence);
  v("unix_s", m.unix_s);
  v("interval_s", m.interval_s);
  v("hostname", m.hostname);
  v("uptime_s", m.uptime_s);
  v("cpu_total", m.cpu_total);
  v("cpus", m.cpus);
  v("load_1m", m.load_1m);
  v("load_5m", m.load_5m);
  v("load_15m", m.load_15m);
  v("memory", m.memory);
  v("swap_total_bytes", m.swap_total_bytes);
  v("swap_used_bytes", m.swap_used_bytes);
  v("cgroup_memory", m.cgroup_memory);
  v("pressure", m.pressure);
  v("cpu_power_w", m.cpu_power_w);
  v("cpu_temperature_c", m.cpu_temperature_c);
  v("gpus", m.gpus);
  v("npus", m.npus);
  v("processes", m.processes);
  v("all_processes", m.all_processes);
}
MAINBOARD_DEFINE_JSON(LiveFrame)

}  // namespace mainboard
