#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include <fmt/format.h>

#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/probes.hpp"

namespace mainboard::host {

namespace {

/// Undoes the octal escapes the kernel uses in mount tables (\040 for a space, \011 tab, …).
std::string unescape_mount_field(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      auto oct = s.substr(i + 1, 3);
      bool ok = oct.size() == 3 &&
                std::all_of(oct.begin(), oct.end(), [](char c) { return c >= '0' && c <= '7'; });
      if (ok) {
        out.push_back(static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

constexpr std::array<const char*, 22> kNetworkFs = {
    "nfs",        "nfs4",      "lustre",       "gpfs",       "beegfs",    "cephfs",
    "ceph",       "cifs",      "smb3",         "smbfs",      "glusterfs", "fuse.glusterfs",
    "fuse.sshfs", "panfs",     "wekafs",       "orangefs",   "pvfs2",     "afs",
    "davfs",      "fuse.s3fs", "fuse.gcsfuse", "fuse.rclone"};
constexpr std::array<const char*, 8> kBlockFs = {"ext4",  "ext3", "ext2",     "xfs",
                                                 "btrfs", "f2fs", "bcachefs", "jfs"};

const BlockDevice* device_for(const std::string& source, const std::vector<BlockDevice>& devices) {
  if (!core::starts_with(source, "/dev/")) return nullptr;
  std::string name = source.substr(5);
  const BlockDevice* best = nullptr;
  for (const auto& d : devices) {
    // Partitions are named after their disk: sda1 → sda, nvme0n1p2 → nvme0n1.
    if (core::starts_with(name, d.name) && (!best || d.name.size() > best->name.size())) best = &d;
  }
  return best;
}

}  // namespace

std::vector<MountEntry> parse_mounts(std::string_view text) {
  std::vector<MountEntry> out;
  for (auto line : core::split_lines(text)) {
    auto f = core::split_ws(line);
    if (f.size() < 3) continue;
    out.push_back({unescape_mount_field(f[0]), unescape_mount_field(f[1]), std::string(f[2])});
  }
  return out;
}

std::optional<MountEntry> mount_for(const std::vector<MountEntry>& mounts, std::string_view path) {
  const MountEntry* best = nullptr;
  for (const auto& m : mounts) {
    const auto& mp = m.mount_point;
    bool prefix =
        path == mp || mp == "/" ||
        (core::starts_with(path, mp) && path.size() > mp.size() && path[mp.size()] == '/');
    // Later mounts of the same point hide earlier ones, hence >=.
    if (prefix && (!best || mp.size() >= best->mount_point.size())) best = &m;
  }
  if (!best) return std::nullopt;
  return *best;
}

StorageTier classify_filesystem(const std::string& type, const std::string& device,
                                const std::vector<BlockDevice>& devices) {
  if (type == "tmpfs" || type == "ramfs") return StorageTier::memory;
  for (const char* n : kNetworkFs)
    if (type == n) return StorageTier::network;
  bool block = std::find_if(kBlockFs.begin(), kBlockFs.end(),
                            [&](const char* n) { return type == n; }) != kBlockFs.end();
  if (block || type == "zfs") {
    // A device whose kind the kernel does not say (no queue/rotational) is only "local".
    if (const auto* d = device_for(device, devices)) {
      if (d->nvme || d->rotational == false) return StorageTier::local_ssd;
      if (d->rotational == true) return StorageTier::local_disk;
    }
    return StorageTier::local;
  }
  if (type == "overlay" || type == "virtiofs" || type == "9p") return StorageTier::local;
  return StorageTier::unknown;
}

std::vector<BlockDevice> probe_block_devices(const core::Fs& fs,
                                             std::vector<std::string>* problems) {
  std::vector<BlockDevice> out;
  auto problem = [&](std::string what) {
    if (problems) problems->push_back(std::move(what));
  };
  std::string base = core::paths::kSysBlock;
  for (const auto& name : fs.list(base)) {
    if (core::starts_with(name, "loop") || core::starts_with(name, "ram") ||
        core::starts_with(name, "zram"))
      continue;
    std::string dir = base + "/" + name;
    BlockDevice d;
    d.name = name;
    // Always in 512-byte units, whatever the device's own sector size. Zero is a drive with no
    // medium (an empty card reader) or a device not set up yet: nothing to list.
    auto size = fs.read_line(dir + "/size");
    if (!size) {
      problem(name + ": no size");
    } else if (auto sectors = core::parse_u64(*size)) {
      if (*sectors == 0) continue;
      d.size_bytes = core::checked_mul(*sectors, 512);
      if (!d.size_bytes) problem(name + ": size " + *size + " sectors is more bytes than can be");
    } else {
      problem(name + ": size \"" + size->substr(0, 32) + "\" is not a sector count");
    }
    auto rotational = fs.read_line(dir + "/queue/rotational");
    if (rotational && (*rotational == "0" || *rotational == "1")) d.rotational = *rotational == "1";
    d.removable = fs.read_u64(dir + "/removable").value_or(0) == 1;
    d.nvme = core::starts_with(name, "nvme");
    if (auto model = fs.read_line(dir + "/device/model")) d.model = *model;
    out.push_back(std::move(d));
  }
  return out;
}

namespace {

std::string current_directory(const core::Fs& fs, const core::EnvMap& env) {
  if (fs.is_live()) {
    std::error_code ec;
    auto cwd = std::filesystem::current_path(ec);
    if (!ec) return cwd.string();
  }
  return core::env_value(env, "PWD").value_or("");
}

Filesystem filesystem_for(const core::Fs& fs, const std::vector<MountEntry>& mounts,
                          std::string role, std::string path) {
  Filesystem f;
  f.role = std::move(role);
  f.path = std::move(path);
  if (auto m = mount_for(mounts, f.path)) {
    f.mount_point = m->mount_point;
    f.type = m->type;
    f.device = m->device;
  }
  if (auto space = fs.space(f.path)) {
    f.size_bytes = space->size_bytes;
    f.free_bytes = space->free_bytes;
  }
  return f;
}

}  // namespace

Disk probe_disk(const core::Fs& fs, const core::EnvMap& env, Note& note) {
  Disk disk;
  std::vector<std::string> problems;
  disk.devices = probe_block_devices(fs, &problems);
  if (disk.devices.empty()) note.unsupported("no block devices under /sys/block");
  for (auto& p : problems)
    note.unsupported(std::move(p));
  auto text = fs.read(core::paths::kProcSelfMounts);
  if (!text) {
    note.unsupported(disk.devices.empty()
                         ? std::string("cannot read /proc/self/mounts: no filesystems")
                         : fmt::format("listed {} block device{} from /sys/block, but cannot "
                                       "read /proc/self/mounts: no filesystems",
                                       disk.devices.size(), disk.devices.size() == 1 ? "" : "s"));
    return disk;
  }
  auto mounts = parse_mounts(*text);
  std::vector<std::pair<std::string, std::string>> wanted;
  if (auto cwd = current_directory(fs, env); !cwd.empty()) wanted.emplace_back("cwd", cwd);
  if (auto home = core::env_value(env, "HOME")) wanted.emplace_back("home", *home);
  wanted.emplace_back("tmp", core::env_value(env, "TMPDIR").value_or("/tmp"));
  for (auto& [role, path] : wanted)
    disk.filesystems.push_back(filesystem_for(fs, mounts, role, path));
  return disk;
}

Scratch probe_scratch(const core::Fs& fs, const core::EnvMap& env, Note& note) {
  Scratch s;
  auto text = fs.read(core::paths::kProcSelfMounts);
  auto mounts = text ? parse_mounts(*text) : std::vector<MountEntry>{};
  auto devices = probe_block_devices(fs);

  // Job-local directories first: a scheduler creates them per job on node-local storage.
  std::vector<std::pair<std::string, std::string>> proposals;
  for (const char* var : {"SLURM_TMPDIR", "_CONDOR_SCRATCH_DIR", "TMPDIR", "LOCAL_SCRATCH"})
    if (auto v = core::env_value(env, var)) proposals.emplace_back(*v, std::string("$") + var);
  for (const char* fixed : {"/dev/shm", "/local/scratch", "/scratch/local"})
    proposals.emplace_back(fixed, "well-known path");
  if (auto user = core::env_value(env, "USER")) {
    proposals.emplace_back("/scratch/" + *user, "/scratch/$USER");
    proposals.emplace_back("/local/" + *user, "/local/$USER");
  }
  proposals.emplace_back("/tmp", "well-known path");
  proposals.emplace_back("/var/tmp", "well-known path");

  for (auto& [path, origin] : proposals) {
    if (std::any_of(s.candidates.begin(), s.candidates.end(),
                    [&](const ScratchCandidate& c) { return c.path == path; }))
      continue;
    ScratchCandidate c;
    c.path = path;
    c.origin = origin;
    if (!fs.is_dir(path)) {
      c.reason = "does not exist";
    } else if (!fs.writable(path)) {
      c.reason = "not writable";
    } else {
      c.usable = true;
    }
    if (auto m = mount_for(mounts, path)) {
      c.fs_type = m->type;
      c.tier = classify_filesystem(m->type, m->device, devices);
    }
    if (c.usable)
      if (auto space = fs.space(path)) c.free_bytes = space->free_bytes;
    s.candidates.push_back(std::move(c));
  }

  const ScratchCandidate* best = nullptr;
  for (const auto& c : s.candidates) {
    if (!c.usable) continue;
    if (!best || c.tier < best->tier ||
        (c.tier == best->tier && c.free_bytes.value_or(0) > best->free_bytes.value_or(0)))
      best = &c;
  }
  if (best) {
    s.found = true;
    s.path = best->path;
    s.fs_type = best->fs_type;
    s.tier = best->tier;
    s.free_bytes = best->free_bytes;
  } else {
    note.unsupported("no writable scratch directory");
  }
  return s;
}

}  // namespace mainboard::host
