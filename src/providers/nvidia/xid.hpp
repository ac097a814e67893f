#pragma once

// XIDs: the errors the NVIDIA driver logs against a GPU. The kernel log holds every one since
// boot (as far back as its ring buffer reaches), one line each:
//
//   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
//
// so one-shot commands can count them too, where NVML's events only tell a listener what
// happens while it listens. Reading /dev/kmsg needs root or CAP_SYSLOG where
// kernel.dmesg_restrict is set (Debian's default); the reason says so when it is refused.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/fs.hpp"
#include "mainboard/gpu.hpp"
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

/// The XIDs of every GPU on the host, read from /dev/kmsg: the whole log on the first call, only
/// what was added since on later ones (the descriptor stays open). Shared by a host's GPUs.
class XidLog {
 public:
  explicit XidLog(std::shared_ptr<const core::Fs> fs);
  ~XidLog();
  XidLog(const XidLog&) = delete;
  XidLog& operator=(const XidLog&) = delete;

  struct ForGpu {
    std::optional<std::uint32_t> count;
    std::optional<XidError> last;
    std::string reason;  ///< why there is no count
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
  struct Tally {
    std::uint32_t count = 0;
    XidError last;
  };
  std::map<PciAddress, Tally> tallies_;
};

}  // namespace mainboard::nvidia
