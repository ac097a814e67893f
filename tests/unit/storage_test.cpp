#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "host/probes.hpp"
#include "mainboard/machine.hpp"
#include "test_util.hpp"
#include "view/summary.hpp"

using namespace mainboard;

TEST(Mounts, ParsesEscapesAndFindsTheLongestPrefix) {
  auto mounts = host::parse_mounts(
      "/dev/sda1 / ext4 rw 0 0\n/dev/sdb1 /mnt/my\\040disk xfs rw 0 0\n"
      "server:/s /scratch nfs4 rw 0 0\nbroken\n");
  ASSERT_EQ(mounts.size(), 3u);
  EXPECT_EQ(mounts[1].mount_point, "/mnt/my disk");
  EXPECT_EQ(host::mount_for(mounts, "/scratch/me")->type, "nfs4");
  EXPECT_EQ(host::mount_for(mounts, "/scratchy")->type, "ext4");  // not under /scratch
  EXPECT_EQ(host::mount_for(mounts, "/mnt/my disk/x")->device, "/dev/sdb1");
  EXPECT_FALSE(host::mount_for({}, "/tmp"));
}

TEST(Mounts, LaterMountsHideEarlierOnes) {
  auto mounts = host::parse_mounts("/dev/a /tmp ext4 rw 0 0\ntmpfs /tmp tmpfs rw 0 0\n");
  EXPECT_EQ(host::mount_for(mounts, "/tmp")->type, "tmpfs");
}

TEST(Storage, ClassifiesFilesystems) {
  std::vector<BlockDevice> devices = {{"nvme0n1", "", 1, false, true, false},
                                      {"sda", "", 1, true, false, false},
                                      {"sdc", "", 1, std::nullopt, false, false}};
  EXPECT_EQ(host::classify_filesystem("tmpfs", "tmpfs", devices), StorageTier::memory);
  EXPECT_EQ(host::classify_filesystem("lustre", "x@o2ib:/fs", devices), StorageTier::network);
  EXPECT_EQ(host::classify_filesystem("nfs4", "s:/e", devices), StorageTier::network);
  EXPECT_EQ(host::classify_filesystem("xfs", "/dev/nvme0n1p3", devices), StorageTier::local_ssd);
  EXPECT_EQ(host::classify_filesystem("ext4", "/dev/sda1", devices), StorageTier::local_disk);
  EXPECT_EQ(host::classify_filesystem("ext4", "/dev/mapper/vg-root", devices), StorageTier::local);
  // No queue/rotational: neither an SSD nor a spinning disk, only local.
  EXPECT_EQ(host::classify_filesystem("ext4", "/dev/sdc1", devices), StorageTier::local);
  EXPECT_EQ(host::classify_filesystem("weirdfs", "/dev/x", devices), StorageTier::unknown);
}

TEST(Storage, BlockDevicesSkipVirtualAndEmpty) {
  TempDir root;
  root.write("sys/block/nvme0n1/size", "3750748848\n");
  root.write("sys/block/nvme0n1/queue/rotational", "0\n");
  root.write("sys/block/nvme0n1/device/model", "Fast SSD   \n");
  root.write("sys/block/loop0/size", "2048\n");
  root.write("sys/block/sdy/size", "0\n");  // no medium
  auto devices = host::probe_block_devices(core::Fs(root.path()));
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "nvme0n1");
  EXPECT_EQ(devices[0].size_bytes, 3750748848ull * 512);
  EXPECT_TRUE(devices[0].nvme);
  EXPECT_EQ(devices[0].rotational, false);
  EXPECT_EQ(devices[0].model, "Fast SSD");
}

// A device whose size or kind cannot be read is kept, with that reading unknown and said why.
TEST(Storage, MalformedSizesAndKindsAreUnknownNotDropped) {
  TempDir root;
  root.write("sys/block/sdz/size", "99999999999999999999999\n");  // past 64 bits
  root.write("sys/block/sdx/size", "18446744073709551615\n");     // 2^64-1 sectors: overflow
  root.write("sys/block/sdw/size", "-8\n");
  root.write("sys/block/sdv/queue/rotational", "1\n");  // no size at all
  root.write("sys/block/sdu/size", "");                 // empty
  root.write("sys/block/sdt/size", "\x01\x7fgarbage\n");
  root.write("sys/block/sda/size", "2048\n");  // no queue/rotational
  root.write("sys/block/sdb/size", "2048\n");
  root.write("sys/block/sdb/queue/rotational", "NaN\n");
  std::vector<std::string> problems;
  auto devices = host::probe_block_devices(core::Fs(root.path()), &problems);
  ASSERT_EQ(devices.size(), 8u);
  std::map<std::string, BlockDevice> by_name;
  for (const auto& d : devices)
    by_name[d.name] = d;
  for (auto name : {"sdz", "sdx", "sdw", "sdv", "sdu", "sdt"}) {
    EXPECT_FALSE(by_name[name].size_bytes) << name;
    EXPECT_TRUE(std::any_of(problems.begin(), problems.end(), [&](const std::string& p) {
      return p.rfind(name, 0) == 0;
    })) << name;
  }
  EXPECT_EQ(by_name["sdv"].rotational, true);
  EXPECT_EQ(by_name["sda"].size_bytes, 2048u * 512);
  EXPECT_FALSE(by_name["sda"].rotational);
  EXPECT_FALSE(by_name["sdb"].rotational);
  EXPECT_EQ(problems.size(), 6u);
}

// The disk diagnostic says what it read and what it could not.
TEST(Storage, UnreadableMountsSayTheDevicesWereListed) {
  TempDir root;
  root.write("sys/block/sda/size", "2048\n");
  root.write("sys/block/sda/queue/rotational", "1\n");
  host::Note note;
  auto disk = host::probe_disk(core::Fs(root.path()), {}, note);
  ASSERT_EQ(disk.devices.size(), 1u);
  EXPECT_TRUE(disk.filesystems.empty());
  EXPECT_EQ(note.reason,
            "listed 1 block device from /sys/block, but cannot read /proc/self/mounts: no "
            "filesystems");
}

TEST(Scratch, PrefersFasterTiersThenMoreSpace) {
  TempDir root;
  root.write("proc/self/mounts",
             "/dev/nvme0n1p1 / ext4 rw 0 0\n/dev/nvme0n1p2 /local xfs rw 0 0\n"
             "tmpfs /dev/shm tmpfs rw 0 0\nfs@o2ib:/lus /scratch lustre rw 0 0\n");
  root.write("sys/block/nvme0n1/size", "1000\n");
  root.write("sys/block/nvme0n1/queue/rotational", "0\n");
  for (auto d : {"tmp", "local/scratch", "scratch/me", "dev/shm"})
    root.mkdir(d);
  root.write(".mainboard/writable", "/tmp\n/local/scratch\n/scratch/me\n");
  root.write(
      ".mainboard/space.json",
      R"({"/": {"size_bytes": 10, "free_bytes": 5}, "/local": {"size_bytes": 100, "free_bytes": 90},
                 "/scratch": {"size_bytes": 1000, "free_bytes": 900}})");
  core::EnvMap env{{"USER", "me"}};
  host::Note note;
  auto s = host::probe_scratch(core::Fs(root.path()), env, note);
  ASSERT_TRUE(s.found);
  EXPECT_EQ(s.path, "/local/scratch");  // /dev/shm is faster but not writable here
  EXPECT_EQ(s.tier, StorageTier::local_ssd);
  EXPECT_EQ(s.free_bytes, 90u);
  auto shm = std::find_if(s.candidates.begin(), s.candidates.end(),
                          [](const ScratchCandidate& c) { return c.path == "/dev/shm"; });
  ASSERT_NE(shm, s.candidates.end());
  EXPECT_FALSE(shm->usable);
  EXPECT_EQ(shm->reason, "not writable");
}

TEST(Scratch, NothingWritableIsUnsupported) {
  TempDir root;
  host::Note note;
  auto s = host::probe_scratch(core::Fs(root.path()), {}, note);
  EXPECT_FALSE(s.found);
  EXPECT_EQ(note.status, ProbeStatus::unsupported);
  EXPECT_FALSE(s.candidates.empty());
}

TEST(Scratch, LiveHostFindsSomething) {
  core::EnvMap env = core::process_environment();
  host::Note note;
  auto s = host::probe_scratch(core::Fs("/"), env, note);
  EXPECT_TRUE(s.found);  // /tmp at least is writable on any test machine
  EXPECT_TRUE(s.free_bytes.has_value());
}

// A recorded host whose disks the kernel describes oddly: each is listed, what is unknown is
// said to be unknown (never "SSD", never "0 B"), and the diagnostic says what was read.
TEST(Storage, OddDisksOfARecordedHost) {
  Machine::Options o;
  o.sysroot = fixture_host("odd-disks");
  auto s = Machine(o).snapshot({.toolchain = false});
  ASSERT_EQ(s.disk.devices.size(), 5u);
  std::map<std::string, BlockDevice> by_name;
  for (const auto& d : s.disk.devices)
    by_name[d.name] = d;
  EXPECT_EQ(by_name["vda"].size_bytes, 16777216ull * 512);
  EXPECT_FALSE(by_name["vda"].rotational);
  for (auto name : {"vdb", "vdc", "vdd"})
    EXPECT_FALSE(by_name[name].size_bytes) << name;
  EXPECT_EQ(by_name["vdd"].rotational, false);
  EXPECT_EQ(by_name["nvme0n1"].size_bytes, 1000215216ull * 512);
  EXPECT_TRUE(s.disk.filesystems.empty());
  const auto* d = s.diagnostic("disk");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->reason,
            "vdb: size 18446744073709551615 sectors is more bytes than can be; vdc: size \"-1\" "
            "is not a sector count; vdd: no size; listed 5 block devices from /sys/block, but "
            "cannot read /proc/self/mounts: no filesystems");
  auto text = view::render_summary(s, view::Style{false});
  EXPECT_NE(text.find("vda 8.00 GiB kind unknown"), std::string::npos) << text;
  EXPECT_NE(text.find("vdb size unknown rotational"), std::string::npos) << text;
  EXPECT_EQ(text.find("0 B"), std::string::npos) << text;
}
