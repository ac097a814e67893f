#include <gtest/gtest.h>

#include "host/probes.hpp"
#include "test_util.hpp"

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
                                      {"sda", "", 1, true, false, false}};
  EXPECT_EQ(host::classify_filesystem("tmpfs", "tmpfs", devices), StorageTier::memory);
  EXPECT_EQ(host::classify_filesystem("lustre", "x@o2ib:/fs", devices), StorageTier::network);
  EXPECT_EQ(host::classify_filesystem("nfs4", "s:/e", devices), StorageTier::network);
  EXPECT_EQ(host::classify_filesystem("xfs", "/dev/nvme0n1p3", devices), StorageTier::local_ssd);
  EXPECT_EQ(host::classify_filesystem("ext4", "/dev/sda1", devices), StorageTier::local_disk);
  EXPECT_EQ(host::classify_filesystem("ext4", "/dev/mapper/vg-root", devices), StorageTier::local);
  EXPECT_EQ(host::classify_filesystem("weirdfs", "/dev/x", devices), StorageTier::unknown);
}

TEST(Storage, BlockDevicesSkipVirtualAndMalformed) {
  TempDir root;
  root.write("sys/block/nvme0n1/size", "3750748848\n");
  root.write("sys/block/nvme0n1/queue/rotational", "0\n");
  root.write("sys/block/nvme0n1/device/model", "Fast SSD   \n");
  root.write("sys/block/loop0/size", "2048\n");
  root.write("sys/block/sdz/size", "99999999999999999999999\n");
  root.write("sys/block/sdy/size", "0\n");
  auto devices = host::probe_block_devices(core::Fs(root.path()));
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "nvme0n1");
  EXPECT_EQ(devices[0].size_bytes, 3750748848ull * 512);
  EXPECT_TRUE(devices[0].nvme);
  EXPECT_FALSE(devices[0].rotational);
  EXPECT_EQ(devices[0].model, "Fast SSD");
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
