#include "providers/nvidia/xid.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

#include "core/clock.hpp"

namespace mainboard::nvidia {

std::string xid_meaning(std::uint32_t code) {
  // NVIDIA's XID catalog (docs.nvidia.com/deploy/xid-errors), in our words.
  switch (code) {
    case 8: return "GPU stopped processing (a channel timed out)";
    case 13: return "graphics engine exception (often an out-of-range access in a kernel)";
    case 31: return "GPU memory page fault (an illegal address in a kernel)";
    case 32: return "invalid or corrupted push buffer stream";
    case 38: return "driver firmware error";
    case 43: return "GPU stopped processing (the application hit a fault)";
    case 45: return "preemptive cleanup after an earlier error or a killed process";
    case 48: return "double-bit ECC error";
    case 61: return "internal micro-controller breakpoint";
    case 62: return "internal micro-controller halt";
    case 63: return "ECC page retirement or row remapping recorded";
    case 64: return "ECC page retirement or row remapping failed";
    case 68: return "video processor exception";
    case 69: return "graphics engine class error";
    case 74: return "NVLink error";
    case 79: return "GPU has fallen off the bus";
    case 92: return "high single-bit ECC error rate";
    case 94: return "contained ECC error (the affected application was stopped)";
    case 95: return "uncontained ECC error (every application on the GPU is affected)";
    case 109: return "context switch timeout";
    case 119: return "GSP firmware RPC timeout";
    case 120: return "GSP firmware error";
    case 121: return "C2C (chip-to-chip) link error";
    case 140: return "unrecovered ECC error";
    case 143: return "GPU initialization failure";
    case 144:
    case 145:
    case 146:
    case 147:
    case 148:
    case 149:
    case 150: return "NVLink error (NVLink 5)";
    case 154: return "the GPU's recovery action changed (a reset or reboot may be needed)";
    default: return {};
  }
}

namespace {

bool skip(std::string_view& s, char c) {
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

template <class T>
std::optional<T> read_number(std::string_view& s) {
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return v;
}

void trim_front(std::string_view& s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
}

}  // namespace

std::optional<XidRecord> parse_xid_line(std::string_view line) {
  constexpr std::string_view kMark = "NVRM: Xid (PCI:";
  auto at = line.find(kMark);
  if (at == std::string_view::npos) return std::nullopt;
  XidRecord r;
  // When: /dev/kmsg's "pri,seq,usec,flags;" or dmesg's "[seconds]" before the message.
  std::string_view head = line.substr(0, at);
  if (auto semi = head.find(';'); semi != std::string_view::npos) {
    std::string_view f = head.substr(0, semi);
    auto c1 = f.find(',');
    auto c2 = c1 == std::string_view::npos ? c1 : f.find(',', c1 + 1);
    if (c2 != std::string_view::npos) {
      std::string_view usec = f.substr(c2 + 1);
      if (auto v = read_number<unsigned long long>(usec)) r.error.uptime_s = *v / 1e6;
    }
  } else if (auto open = head.find('['); open != std::string_view::npos) {
    std::string_view t = head.substr(open + 1);
    trim_front(t);
    if (auto seconds = read_number<double>(t)) r.error.uptime_s = *seconds;
  }
  std::string_view s = line.substr(at + kMark.size());
  auto close = s.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  auto address = parse_pci_bus_id(std::string(s.substr(0, close)));
  if (!address) return std::nullopt;
  r.address = *address;
  s.remove_prefix(close + 1);
  if (!skip(s, ':')) return std::nullopt;
  trim_front(s);
  auto code = read_number<std::uint32_t>(s);
  if (!code) return std::nullopt;
  r.error.code = *code;
  r.error.meaning = xid_meaning(*code);
  // Newer drivers name the process: ", pid=1234, name=python3, …" (pid='<unknown>' for none).
  if (auto p = s.find("pid="); p != std::string_view::npos) {
    std::string_view pid = s.substr(p + 4);
    if (auto v = read_number<std::uint32_t>(pid)) r.error.pid = *v;
  }
  if (auto n = s.find("name="); n != std::string_view::npos) {
    std::string_view name = s.substr(n + 5);
    name = name.substr(0, name.find(','));
    if (name != "<unknown>" && name.size() <= 64) r.error.process = std::string(name);
  }
  return r;
}

XidEvents::XidEvents(std::shared_ptr<NvmlLibrary> nvml,
                     const std::vector<std::pair<nvml::Device, PciAddress>>& gpus)
    : nvml_(std::move(nvml)) {
  auto& n = *nvml_;
  if (!n.ok || !n.event_set_create || !n.register_events || !n.event_set_wait ||
      !n.event_set_free) {
    reason_ = "this NVML has no events";
    return;
  }
  if (gpus.empty()) {
    reason_ = "no GPU to listen to";
    return;
  }
  if (auto r = n.event_set_create(&set_); r != nvml::kSuccess) {
    set_ = nullptr;
    reason_ = "NVML could not create an event set: " + n.describe(r);
    return;
  }
  std::string refused;
  for (const auto& [handle, address] : gpus) {
    auto r = n.register_events(handle, nvml::kEventXidCriticalError, set_);
    if (r == nvml::kSuccess)
      watched_.emplace_back(handle, address);
    else
      refused = n.describe(r);
  }
  if (watched_.empty()) {
    reason_ = "NVML refused XID events: " + refused;
    return;
  }
  since_unix_s_ = static_cast<double>(core::unix_ns()) / 1e9;
  thread_ = std::thread([this] { run(); });
}

XidEvents::~XidEvents() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();  // within one wait's timeout
  }
  if (set_) nvml_->event_set_free(set_);
}

void XidEvents::run() {
  // NVML's wait cannot be interrupted: a short timeout bounds how long stopping takes.
  constexpr unsigned kWaitMs = 200;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
    }
    nvml::EventData data{};
    auto r = nvml_->event_set_wait(set_, &data, kWaitMs);
    if (r == nvml::kSuccess) {
      if (!(data.eventType & nvml::kEventXidCriticalError)) continue;
      std::lock_guard<std::mutex> lock(mutex_);
      for (const auto& [handle, address] : watched_) {
        if (handle != data.device) continue;
        auto& t = tallies_[address];
        ++t.count;
        t.last = XidError{};
        t.last.code = static_cast<std::uint32_t>(data.eventData);
        t.last.meaning = xid_meaning(t.last.code);
        t.last.uptime_s = static_cast<double>(core::boot_ns()) / 1e9;
      }
    } else if (r != nvml::kTimeout) {
      // A GPU lost or a driver gone: keep listening, but never spin.
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(kWaitMs), [&] { return stop_; });
    }
  }
}

bool XidEvents::watches(const PciAddress& address) const {
  for (const auto& w : watched_)
    if (w.second == address) return true;
  return false;
}

XidTally XidEvents::tally(const PciAddress& address) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = tallies_.find(address);
  return it == tallies_.end() ? XidTally{} : it->second;
}

XidLog::XidLog(std::shared_ptr<const core::Fs> fs) : fs_(std::move(fs)) {}

XidLog::~XidLog() {
  if (fd_ >= 0) ::close(fd_);
}

void XidLog::read_new() {
  if (!opened_) {
    opened_ = true;
    fd_ = fs_->open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
    if (fd_ < 0) {
      int e = errno;
      reason_ = "the kernel log (/dev/kmsg) is not readable: " + std::string(std::strerror(e));
      if (e == EPERM || e == EACCES)
        reason_ += " (it needs root or CAP_SYSLOG where kernel.dmesg_restrict is set)";
      return;
    }
  }
  if (fd_ < 0) return;
  // /dev/kmsg gives one record a read and EAGAIN at the end; a plain file (a recorded host)
  // gives blocks and 0 at the end. Bounded either way: a log is a few MiB at most.
  constexpr std::size_t kMaxBytes = 64u << 20, kMaxLine = 64u << 10;
  char buf[16384];
  std::size_t this_call = 0;
  // What the first read gave, for a host being recorded: the XID lines alone, in the log's form.
  bool first = !recorded_;
  std::string seen;
  while (this_call < kMaxBytes) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) continue;  // records overwritten before we read them: go on
      break;                         // EAGAIN: nothing more for now
    }
    if (n == 0) break;
    this_call += static_cast<std::size_t>(n);
    partial_.append(buf, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (auto nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n', start)) {
      std::string_view line = std::string_view(partial_).substr(start, nl - start);
      if (auto r = parse_xid_line(line)) {
        if (first) seen.append(line).push_back('\n');
        auto& t = tallies_[r->address];
        ++t.count;
        t.last = std::move(r->error);
      }
      start = nl + 1;
    }
    partial_.erase(0, start);
    if (partial_.size() > kMaxLine) partial_.clear();  // no line is this long: not a log
  }
  if (first) {
    recorded_ = true;
    fs_->observed("/dev/kmsg", seen);
  }
}

namespace {

/// The address the kernel and the listener key a GPU by: the device, function 0.
std::optional<PciAddress> device_address(std::string_view pci_bus_id) {
  auto address = parse_pci_bus_id(std::string(pci_bus_id));
  if (address) address->function = 0;
  return address;
}

}  // namespace

void XidLog::add_gpu(nvml::Device handle, std::string_view pci_bus_id) {
  auto address = device_address(pci_bus_id);
  if (!handle || !address) return;
  std::lock_guard<std::mutex> lock(mutex_);
  gpus_.emplace_back(handle, *address);
}

void XidLog::listen(const std::shared_ptr<NvmlLibrary>& nvml) {
  std::lock_guard<std::mutex> lock(mutex_);
  read_new();
  if (fd_ >= 0 || events_) return;
  events_ = std::make_unique<XidEvents>(nvml, gpus_);
}

XidLog::ForGpu XidLog::for_gpu(std::string_view pci_bus_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  read_new();
  ForGpu out;
  auto address = device_address(pci_bus_id);
  if (fd_ < 0) {
    if (events_ && events_->listening() && address && events_->watches(*address)) {
      auto t = events_->tally(*address);
      out.count = t.count;
      if (t.count) out.last = std::move(t.last);
      out.source = XidSource::nvml_events;
      out.since_unix_s = events_->since_unix_s();
      return out;
    }
    out.reason = reason_;
    if (events_)
      out.reason += "; NVML events: " + (events_->listening() ? std::string("refused for this GPU")
                                                              : events_->reason());
    return out;
  }
  if (!address) {
    out.reason = "no PCI address for this GPU";
    return out;
  }
  out.count = 0;
  out.source = XidSource::kernel_log;
  if (auto it = tallies_.find(*address); it != tallies_.end()) {
    out.count = it->second.count;
    out.last = it->second.last;
  }
  return out;
}

}  // namespace mainboard::nvidia
