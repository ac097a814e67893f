#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/unit.hpp"

namespace mainboard {

/// Host interconnect state: throughput counters and the PCIe link.
struct MAINBOARD_API PcieReading {
  std::optional<double> tx_kbps;
  std::optional<double> rx_kbps;
  std::optional<int> link_gen;
  std::optional<int> link_width;
  std::optional<int> max_link_gen;
  std::optional<int> max_link_width;
  bool operator==(const PcieReading&) const = default;
};

/// A process using an accelerator. Drivers report the host's PIDs; `pid` is the one this process
/// knows it by (its own PID namespace's, in a container).
struct MAINBOARD_API GpuProcess {
  std::uint32_t pid = 0;
  std::string name;
  std::optional<std::uint64_t> used_memory_bytes;
  /// The driver's (host) PID, where it differs from `pid`.
  std::optional<std::uint32_t> host_pid;
  /// Seen from the host: its PID inside its own container's PID namespace.
  std::optional<std::uint32_t> container_pid;
  /// False for a process in a PID namespace this one cannot see into (another container, or
  /// the host seen from a container): `pid` is then the driver's and it has no name here.
  bool visible = true;
  bool operator==(const GpuProcess&) const = default;
};

/// One MIG instance of a partitioned GPU.
struct MAINBOARD_API MigDevice {
  std::string uuid;
  std::optional<std::uint32_t> gpu_instance_id;
  std::optional<std::uint32_t> compute_instance_id;
  std::optional<std::uint64_t> memory_total_bytes;
  bool operator==(const MigDevice&) const = default;
};

/// Identity of a GPU, computed once.
struct MAINBOARD_API GpuInfo {
  std::uint32_t index = 0;  ///< visible ordinal, after CUDA_VISIBLE_DEVICES and friends
  std::string provider;     ///< nvidia, amd, apple
  std::string label;
  std::string vendor;
  std::string uuid;
  std::string pci_bus_id;
  std::string architecture;                       ///< e.g. Hopper, CDNA 3, Apple M3 Max
  std::string arch_key;                           ///< dispatch key, e.g. sm_90, gfx942
  std::string compute_capability;                 ///< e.g. "9.0" (NVIDIA only)
  std::optional<std::uint32_t> sm_count;          ///< streaming multiprocessors / compute units
  std::optional<std::uint32_t> core_count;        ///< GPU cores where that is how it is counted
  std::optional<double> peak_bandwidth_gbs;       ///< theoretical peak memory bandwidth
  std::optional<std::uint32_t> memory_clock_mhz;  ///< the clock the peak is computed from
  std::optional<std::uint32_t> memory_bus_width_bits;
  std::string driver_version;
  std::optional<std::uint64_t> memory_total_bytes;
  bool coherent = false;  ///< shares a cache-coherent pool with the host
  std::optional<bool> mig_enabled;
  std::vector<MigDevice> mig_devices;
  std::string metal_support;  ///< Apple: Metal family
  bool operator==(const GpuInfo&) const = default;
};

/// One GPU-to-GPU link (NVLink): its state, the payload it carried and its error counters, each
/// counted since the driver loaded. Counters the driver does not give are empty.
struct MAINBOARD_API GpuLink {
  std::uint32_t link = 0;
  bool active = false;
  std::optional<std::uint32_t> version;  ///< NVLink generation
  std::optional<std::uint64_t> tx_bytes;
  std::optional<std::uint64_t> rx_bytes;
  std::optional<std::uint64_t> replay_errors;    ///< packets sent again after an error
  std::optional<std::uint64_t> recovery_errors;  ///< link retrained after failing
  std::optional<std::uint64_t> crc_errors;       ///< flits that failed their CRC
  /// What the link reaches: its PCI address in NVML's form ("00000000:19:00.0"), and "gpu",
  /// "switch" (an NVSwitch) or "npu" (IBM POWER's NVLink bridge). Empty where not told.
  std::optional<std::string> remote_pci_bus_id;
  std::optional<std::string> remote_kind;
  bool operator==(const GpuLink&) const = default;
};

/// An XID: an error the NVIDIA driver logs against a GPU (a fault, a lost GPU, an ECC page).
struct MAINBOARD_API XidError {
  std::uint32_t code = 0;
  std::string meaning;               ///< from NVIDIA's XID catalog; empty for a code not in it
  std::optional<std::uint32_t> pid;  ///< the process the driver names, where it names one
  std::string process;
  std::optional<double> uptime_s;  ///< when, in seconds since the host booted
  bool operator==(const XidError&) const = default;
};

/// Where a GPU's XID count comes from (JSON: "", "kernel_log", "nvml_events").
enum class XidSource { none, kernel_log, nvml_events };
MAINBOARD_API const char* to_string(XidSource source);

/// What a GPU's driver says about its fitness for work: persistence, ECC errors, memory rows
/// remapped or pages retired. Each empty where the driver or GPU does not report it
/// (`unavailable` says which and why).
struct MAINBOARD_API GpuHealth {
  /// Persistence mode: the driver keeps the GPU initialized with no client attached.
  std::optional<bool> persistence_mode;
  std::optional<bool> ecc_enabled;
  /// ECC error counts: since the driver loaded (volatile) and over the GPU's life (aggregate).
  std::optional<std::uint64_t> ecc_corrected_volatile;
  std::optional<std::uint64_t> ecc_uncorrected_volatile;
  std::optional<std::uint64_t> ecc_uncorrected_aggregate;
  /// Row remapping (Ampere and later): rows remapped for correctable and uncorrectable errors,
  /// a remapping waiting for a GPU reset, a remapping that failed.
  std::optional<std::uint32_t> remapped_rows_correctable;
  std::optional<std::uint32_t> remapped_rows_uncorrectable;
  std::optional<bool> remap_pending;
  std::optional<bool> remap_failed;
  /// Page retirement (before Ampere): pages waiting for a reset to be retired.
  std::optional<bool> retired_pages_pending;
  /// XIDs the driver logged for this GPU, and the last of them. `xid_source` says over what:
  /// the kernel log, since boot (as far back as it reaches); NVML's events, since a
  /// long-running reader (Machine::Options::listen_for_xids) began listening, at
  /// `xid_since_unix_s`; none when there is no count.
  std::optional<std::uint32_t> xid_errors;
  std::optional<XidError> last_xid;
  XidSource xid_source = XidSource::none;
  std::optional<double> xid_since_unix_s;
  /// The period xid_errors covers, in words: "since boot" or "since listening began".
  const char* xid_period() const {
    return xid_source == XidSource::nvml_events ? "since listening began" : "since boot";
  }
  /// NVLink, link by link (empty for a GPU without it).
  std::vector<GpuLink> links;
  /// The parts the driver did not give, and why: "ecc", "ecc errors", "persistence",
  /// "remapped rows", "retired pages", "xid", "nvlink".
  std::map<std::string, Unavailable> unavailable;
  bool operator==(const GpuHealth&) const = default;
};

/// How busy the units inside a GPU were over a window, in percent (NVIDIA's GPM, Hopper and
/// later): SMs with a warp resident, warps resident out of the SMs' capacity, tensor cores, and
/// DRAM bandwidth. Unlike the driver's utilization, a kernel on one SM is not a busy GPU.
struct MAINBOARD_API GpuUnitActivity {
  std::optional<double> sm_active_pct;
  std::optional<double> sm_occupancy_pct;
  std::optional<double> tensor_active_pct;
  std::optional<double> dram_bandwidth_pct;
  std::optional<double> graphics_active_pct;
  std::optional<double> window_s;  ///< the time between the two samples compared
  bool operator==(const GpuUnitActivity&) const = default;
};

/// A GPU at one moment: identity plus every reading.
struct MAINBOARD_API GpuSnapshot {
  GpuInfo info;
  UnitSnapshot telemetry;
  std::vector<Memory> memory_regions;  ///< pools besides the main one, e.g. AMD's GTT
  Reading<PcieReading> pcie;
  std::optional<double> fan_speed_pct;
  std::vector<GpuProcess> processes;
  /// Empty where the provider reads none (or in a snapshot saved before it was read).
  std::optional<GpuHealth> health;
  Reading<GpuUnitActivity> unit_activity;
  bool operator==(const GpuSnapshot&) const = default;
};

/// A GPU from any provider. Identity is computed once; readings are live.
class MAINBOARD_API Gpu : public Unit {
 public:
  UnitKind kind() const override { return UnitKind::gpu; }
  const std::string& label() const override { return info().label; }
  const std::string& architecture() const override { return info().architecture; }
  const std::string& vendor() const override { return info().vendor; }
  virtual const GpuInfo& info() const = 0;
  const std::string& uuid() const { return info().uuid; }
  const std::string& arch_key() const { return info().arch_key; }
  std::optional<double> peak_bandwidth_gbs() const { return info().peak_bandwidth_gbs; }
  virtual Reading<PcieReading> pcie() const;
  /// Memory pools besides memory(), each with its own scope (AMD: "gtt", host memory the GPU
  /// maps). Empty for most GPUs.
  virtual std::vector<Memory> memory_regions() const;
  virtual std::optional<double> fan_speed_pct() const;
  virtual std::vector<GpuProcess> processes() const;
  /// Whether the driver lists this GPU's processes now, so that a process missing from
  /// processes() is not using it. False where nothing is known (no per-process reporting).
  virtual bool lists_processes() const;
  /// Persistence, ECC and memory-repair state (empty for providers that report none).
  virtual GpuHealth health() const;
  /// Unit activity since the previous call (at least 100 ms before; the first call waits for
  /// what is left of the 100 ms after the GPU was found). Unsupported by default.
  virtual Reading<GpuUnitActivity> unit_activity() const;

  std::optional<double> temperature_c() const {
    auto t = thermal();
    return t ? t->temperature_c : std::nullopt;
  }
  std::optional<double> gpu_util_pct() const {
    auto u = utilization();
    return u ? u->compute_pct : std::nullopt;
  }

  /// Every reading at once, labelled with `name`.
  GpuSnapshot gpu_snapshot(const std::string& name = "") const;

  /// The GPUs of every provider on this host (Machine::instance().gpus()), best-effort: a
  /// provider that fails is logged and skipped.
  static const std::vector<std::shared_ptr<Gpu>>& all();
  /// One provider's GPUs ("nvidia"), or none when it fails or is not known.
  static std::vector<std::shared_ptr<Gpu>> probe(const std::string& provider);
};

}  // namespace mainboard
