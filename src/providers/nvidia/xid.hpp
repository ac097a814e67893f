#pragma once

// XIDs: the errors the NVIDIA driver logs against a GPU. The kernel log holds every one since
// boot (as far back as its ring buffer reaches), one line each:
//
//   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
//
// so one-shot commands can count them too, where NVML's events only tell a listener what
// happens while it listens. Reading /dev/kmsg needs root or CAP_SYSLOG where
// kernel.dmesg_restrict is set (Debian's default); the reason says so when it is refused. A
// long-running reader (serve) that cannot read it listens to NVML's events instead, and counts
// from the moment it started listening.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/fs.hpp"
#include "mainboard/gpu.hpp"
#include "providers/nvidia/libraries.hpp"
#include "providers/nvidia/visibility.hpp"

namespace mainboard::nvidia {

/// What NVIDIA's XID catalog says a code means; empty for a code not in it.
std::string xid_meaning(std::uint32_t code);

struct XidRecord {
  PciAddress address;
  XidError error;
};

/// One kernel log line, as /dev/kmsg gives it ("6,1234,5678901,-;NVRM: Xid …", the third field
/// microseconds since boot) or as dmesg prints it ("[ 5.678901] NVRM: Xid …"); empty for any
/// other line.
std::optional<XidRecord> parse_xid_line(std::string_view line);

/// XIDs counted per GPU (by PCI address, function 0, as the kernel names the device).
struct XidTally {
  std::uint32_t count = 0;
  XidError last;
};

/// A thread that waits on NVML's XID events for a set of GPUs and counts them. NVML reports an
/// XID to every listener registered when it happens, root or not, but nothing from before.
class XidEvents {
 public:
  /// Registers each GPU (physical handles, not MIG instances) and starts listening; where NVML
  /// lacks events or refuses every GPU, listening() is false and reason() says why.
  XidEvents(std::shared_ptr<NvmlLibrary> nvml,
            const std::vector<std::pair<nvml::Device, PciAddress>>& gpus);
  ~XidEvents();
  XidEvents(const XidEvents&) = delete;
  XidEvents& operator=(const XidEvents&) = delete;

  bool listening() const { return thread_.joinable(); }
  const std::string& reason() const { return reason_; }
  /// Whether this GPU was registered (a GPU that refused is not counted, not "no XIDs").
  bool watches(const PciAddress& address) const;
  /// What was counted for the GPU so far.
  XidTally tally(const PciAddress& address) const;
  /// When listening began, in seconds since the Unix epoch.
  double since_unix_s() const { return since_unix_s_; }

 private:
  void run();

  std::shared_ptr<NvmlLibrary> nvml_;
  nvml::EventSet set_ = nullptr;
  std::vector<std::pair<nvml::Device, PciAddress>> watched_;
  std::string reason_;
  double since_unix_s_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::map<PciAddress, XidTally> tallies_;
  std::thread thread_;
};

/// The XIDs of every GPU on the host, read from /dev/kmsg: the whole log on the first call, only
/// what was added since on later ones (the descriptor stays open). Shared by a host's GPUs.
class XidLog {
 public:
  explicit XidLog(std::shared_ptr<const core::Fs> fs);
  ~XidLog();
  XidLog(const XidLog&) = delete;
  XidLog& operator=(const XidLog&) = delete;

  /// A GPU the listener would watch (its physical NVML handle and bus id).
  void add_gpu(nvml::Device handle, std::string_view pci_bus_id);
  /// For a long-running reader: opens the kernel log now, and where it cannot be read, listens
  /// to NVML's XID events for the GPUs added so far.
  void listen(const std::shared_ptr<NvmlLibrary>& nvml);

  struct ForGpu {
    std::optional<std::uint32_t> count;
    std::optional<XidError> last;
    XidSource source = XidSource::none;
    std::optional<double> since_unix_s;  ///< for nvml_events: when listening began
    std::string reason;                  ///< why there is no count
  };
  /// The XIDs logged so far for the GPU at this NVML bus id.
  ForGpu for_gpu(std::string_view pci_bus_id);

 private:
  void read_new();

  std::shared_ptr<const core::Fs> fs_;
  std::mutex mutex_;
  int fd_ = -1;
  bool opened_ = false;
  bool recorded_ = false;
  std::string reason_;
  std::string partial_;  // a line cut by the end of a read (a plain file, not /dev/kmsg)
  std::map<PciAddress, XidTally> tallies_;
  std::vector<std::pair<nvml::Device, PciAddress>> gpus_;
  std::unique_ptr<XidEvents> events_;
};

}  // namespace mainboard::nvidia
