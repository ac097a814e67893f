#include <algorithm>

#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/probes.hpp"

namespace mainboard::host {

namespace {

struct CgroupMount {
  std::string root;         // the part of the hierarchy mounted here (mountinfo field 4)
  std::string mount_point;  // where it is mounted
};

/// Finds the cgroup mount for a v1 controller ("memory") or, with an empty controller, the v2
/// unified hierarchy. mountinfo(5): "id parent maj:min root mount-point opts … - type src super".
std::optional<CgroupMount> find_mount(std::string_view mountinfo, std::string_view controller) {
  for (auto line : core::split_lines(mountinfo)) {
    auto sep = line.find(" - ");
    if (sep == std::string_view::npos) continue;
    auto left = core::split_ws(line.substr(0, sep));
    auto right = core::split_ws(line.substr(sep + 3));
    if (left.size() < 5 || right.size() < 1) continue;
    bool v2 = right[0] == "cgroup2";
    bool v1 = right[0] == "cgroup";
    if (controller.empty() ? !v2 : !v1) continue;
    if (!controller.empty()) {
      if (right.size() < 3) continue;
      bool has = false;
      for (auto opt : core::split(right[2], ','))
        if (opt == controller) has = true;
      if (!has) continue;
    }
    return CgroupMount{std::string(left[3]), std::string(left[4])};
  }
  return std::nullopt;
}

/// v1 reports "no limit" as LONG_MAX rounded down to the page size (9223372036854771712 with 4K
/// pages); anything this large is not a cap any machine could enforce.
constexpr std::uint64_t kUnlimitedFloor = 1ull << 62;

struct Limit {
  bool present = false;                // the file exists and was read
  bool malformed = false;              // it held something that is not a limit
  std::optional<std::uint64_t> bytes;  // empty: unlimited
};

Limit read_limit(const core::Fs& fs, const std::string& file) {
  Limit l;
  auto line = fs.read_line(file);
  if (!line) return l;
  l.present = true;
  if (*line == "max") return l;
  auto v = core::parse_u64(*line);
  if (!v) {
    l.malformed = true;
    return l;
  }
  if (*v < kUnlimitedFloor) l.bytes = v;
  return l;
}

/// The directories from the process's own cgroup up to the mount point. A cgroup that is not
/// visible in this mount namespace (containers often mount only their own subtree) is replaced
/// by its nearest visible ancestor.
std::vector<std::string> cgroup_dirs(const core::Fs& fs, const CgroupMount& mount,
                                     std::string path) {
  if (mount.root != "/" && core::starts_with(path, mount.root))
    path = path.substr(mount.root.size());
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  std::vector<std::string> dirs;
  std::string rel = path == "/" ? "" : path;
  while (true) {
    std::string dir = mount.mount_point + rel;
    if (fs.is_dir(dir)) dirs.push_back(dir);
    if (rel.empty()) break;
    auto slash = rel.rfind('/');
    rel = slash == std::string::npos ? "" : rel.substr(0, slash);
  }
  return dirs;
}

Reading<CgroupMemory> fill(const core::Fs& fs, const std::vector<std::string>& dirs,
                           const char* limit_file, const char* usage_file, const char* swap_file,
                           CgroupMemory out) {
  if (dirs.empty())
    return Reading<CgroupMemory>::none("the process's cgroup is not visible under its mount");
  std::vector<std::string> malformed;
  for (const auto& dir : dirs) {
    auto limit = read_limit(fs, dir + "/" + limit_file);
    if (limit.malformed) malformed.push_back(dir + "/" + limit_file);
    if (limit.bytes && (!out.limit_bytes || *limit.bytes < *out.limit_bytes)) {
      out.limit_bytes = limit.bytes;
      out.limit_source = dir + "/" + limit_file;
    }
    auto swap = read_limit(fs, dir + "/" + swap_file);
    if (swap.bytes && (!out.swap_limit_bytes || *swap.bytes < *out.swap_limit_bytes))
      out.swap_limit_bytes = swap.bytes;
  }
  out.usage_bytes = fs.read_u64(dirs.front() + "/" + usage_file);
  if (!malformed.empty() && !out.limit_bytes) {
    // We could not read a limit that exists: claiming "no cap" would be a guess.
    return Reading<CgroupMemory>::none("malformed " + malformed.front());
  }
  // Where no directory has the limit file, the controller is not enabled there (the v2 root
  // never has memory.max): nothing caps this process, which is a reading, not a failure.
  return out;
}

}  // namespace

Reading<CgroupMemory> probe_cgroup_memory(const core::Fs& fs) {
  CgroupMemory out;
  auto self = fs.read(core::paths::kProcSelfCgroup);
  auto mountinfo = fs.read(core::paths::kProcSelfMountinfo);
  if (!self || !mountinfo)
    return Reading<CgroupMemory>::none("cannot read /proc/self/cgroup or /proc/self/mountinfo");
  std::optional<std::string> v1_path, v2_path;
  for (auto line : core::split_lines(*self)) {
    auto f = core::split(line, ':');
    if (f.size() < 3) continue;
    // The path may itself contain ':'; it is everything after the second one.
    auto first = line.find(':');
    auto second = line.find(':', first + 1);
    std::string path(line.substr(second + 1));
    if (f[0] == "0" && f[1].empty()) v2_path = path;
    for (auto c : core::split(f[1], ','))
      if (c == "memory") v1_path = path;
  }
  // A hybrid host (v1 controllers plus an empty unified tree) enforces the v1 memory limit.
  if (v1_path) {
    if (auto mount = find_mount(*mountinfo, "memory")) {
      out.version = 1;
      out.path = *v1_path;
      return fill(fs, cgroup_dirs(fs, *mount, *v1_path), "memory.limit_in_bytes",
                  "memory.usage_in_bytes", "memory.memsw.limit_in_bytes", std::move(out));
    }
  }
  if (v2_path) {
    if (auto mount = find_mount(*mountinfo, "")) {
      out.version = 2;
      out.path = *v2_path;
      return fill(fs, cgroup_dirs(fs, *mount, *v2_path), "memory.max", "memory.current",
                  "memory.swap.max", std::move(out));
    }
  }
  return Reading<CgroupMemory>::none("no cgroup memory controller is mounted");
}

}  // namespace mainboard::host
