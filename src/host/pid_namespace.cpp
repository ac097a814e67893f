#include "host/pid_namespace.hpp"

#include "core/text.hpp"

namespace mainboard::host {

PidNamespaceView::PidNamespaceView(const core::Fs& fs) : fs_(fs) {
  own_namespace_ = fs.readlink("/proc/self/ns/pid").value_or("");
  own_nspid_ = core::parse_nspid(fs.read("/proc/self/status").value_or(""));
  // This process in a PID namespace of its own, with a /proc of that namespace (a container):
  // /proc shows the container's PIDs, the driver reports the host's, and one PID number can
  // name two different processes. Nothing is named from /proc then.
  proc_is_host_ =
      own_namespace_.empty() || own_namespace_ == kInitPidNamespace || own_nspid_.size() > 1;
}

ResolvedPid PidNamespaceView::resolve(std::uint32_t driver_pid) const {
  ResolvedPid r;
  r.pid = driver_pid;
  if (!proc_is_host_) {
    r.visible = false;
    return r;
  }
  std::string dir = "/proc/" + std::to_string(driver_pid);
  auto nspid = core::parse_nspid(fs_.read(dir + "/status").value_or(""));
  if (nspid.empty()) {  // gone, or a kernel without NSpid (before 4.1): the PID as it is
    if (auto comm = fs_.read_line(dir + "/comm")) r.name = *comm;
    return r;
  }
  r.name = fs_.read_line(dir + "/comm").value_or("");
  std::size_t depth = own_nspid_.empty() ? 0 : own_nspid_.size() - 1;
  bool same_namespace =
      !own_namespace_.empty() && fs_.readlink(dir + "/ns/pid").value_or("") == own_namespace_;
  if (depth == 0) {
    // On the host: the driver's PID is ours; a process in a container also has its own.
    if (nspid.size() > 1) r.container_pid = nspid.back();
    return r;
  }
  if (same_namespace && nspid.size() > depth) {  // in this namespace: the PID it is known by here
    r.pid = nspid[depth];
    if (r.pid != driver_pid) r.host_pid = driver_pid;
    return r;
  }
  // Outside this namespace (the host, another container): never taken for a process of ours.
  r.visible = false;
  r.name.clear();
  return r;
}

}  // namespace mainboard::host
