#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <thread>

#include "core/atomic_file.hpp"
#include "core/fs.hpp"
#include "mainboard/error.hpp"
#include "test_util.hpp"

using mainboard::core::Fs;

TEST(Fs, ReadsThroughTheRoot) {
  TempDir root;
  root.write("proc/meminfo", "MemTotal: 1 kB\n");
  Fs fs(root.path());
  EXPECT_FALSE(fs.is_live());
  EXPECT_EQ(fs.read("/proc/meminfo"), "MemTotal: 1 kB\n");
  EXPECT_EQ(fs.read_line("/proc/meminfo"), "MemTotal: 1 kB");
  EXPECT_FALSE(fs.read("/proc/cpuinfo"));
  EXPECT_EQ(fs.host_path("/proc/meminfo"), root.path() / "proc/meminfo");
}

TEST(Fs, RefusesTooLargeFilesInsteadOfTruncating) {
  TempDir root;
  root.write("big", std::string(5000, 'x'));
  Fs fs(root.path());
  EXPECT_FALSE(fs.read("/big", 4096));
  EXPECT_TRUE(fs.read("/big", 5000));
}

TEST(Fs, RejectsEmbeddedNulButKeepsDeviceTreeStrings) {
  TempDir root;
  root.write("binary", std::string("ab\0cd", 5));
  root.write("model", std::string("NVIDIA Jetson\0", 14));
  Fs fs(root.path());
  EXPECT_FALSE(fs.read("/binary"));
  EXPECT_EQ(fs.read("/model"), "NVIDIA Jetson");
}

TEST(Fs, DoesNotBlockOnFifos) {
  TempDir root;
  auto fifo = root.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Fs fs(root.path());
  EXPECT_FALSE(fs.read("/fifo"));  // would hang forever if opened for a blocking read
}

TEST(Fs, ReadsRegularFilesOnly) {
  TempDir root;
  root.write("empty", "");
  root.mkdir("dir");
  Fs fs(root.path());
  EXPECT_EQ(fs.read("/empty"), "");  // an empty file is text, unlike a FIFO that reads as empty
  EXPECT_FALSE(fs.read("/dir"));
  Fs host;
  EXPECT_FALSE(host.read("/dev/null"));             // reads as empty, but is a device
  EXPECT_FALSE(host.read("/dev/zero", 64u << 10));  // never ends: given up at the bound
}

TEST(Fs, IntegersAndLists) {
  TempDir root;
  root.write("a/n", "123\n");
  root.write("a/bad", "12x\n");
  root.write("a/sub/x", "");
  Fs fs(root.path());
  EXPECT_EQ(fs.read_u64("/a/n"), 123u);
  EXPECT_FALSE(fs.read_u64("/a/bad"));
  EXPECT_EQ(fs.list("/a"), (std::vector<std::string>{"bad", "n", "sub"}));
  EXPECT_TRUE(fs.list("/missing").empty());
  EXPECT_TRUE(fs.is_dir("/a/sub"));
}

TEST(Fs, SharedReadsGiveWhatTheFirstReadOfANamedPathFoundWhileTheyLast) {
  TempDir root;
  root.write("proc/meminfo", "MemTotal: 1 kB\n");
  root.write("proc/stat", "cpu 1\n");
  root.write("sys/block/vda/size", "8\n");
  root.write("sys/blocked", "not under /sys/block\n");
  Fs fs(root.path());
  {
    mainboard::core::SharedReads shared(fs, {"/proc/meminfo", "/sys/block"});
    EXPECT_EQ(fs.read("/proc/meminfo"), "MemTotal: 1 kB\n");
    EXPECT_EQ(fs.list("/sys/block"), (std::vector<std::string>{"vda"}));
    EXPECT_EQ(fs.read_u64("/sys/block/vda/size"), 8u);
    EXPECT_EQ(fs.read("/sys/blocked"), "not under /sys/block\n");
    root.write("proc/meminfo", "MemTotal: 2 kB\n");
    root.write("proc/stat", "cpu 2\n");
    root.write("sys/block/vda/size", "16\n");
    root.write("sys/block/vdb/size", "4\n");
    root.write("sys/blocked", "changed\n");
    // named: as first read, by every reader of the Fs
    EXPECT_EQ(fs.read("/proc/meminfo"), "MemTotal: 1 kB\n");
    EXPECT_EQ(fs.read_line("/proc/meminfo"), "MemTotal: 1 kB");
    EXPECT_EQ(fs.list("/sys/block"), (std::vector<std::string>{"vda"}));
    EXPECT_EQ(fs.read_u64("/sys/block/vda/size"), 8u);
    EXPECT_FALSE(fs.read("/proc/meminfo", 4));  // longer than this reader takes
    // not named, or named only by a prefix of its name: read again
    EXPECT_EQ(fs.read("/proc/stat"), "cpu 2\n");
    EXPECT_EQ(fs.read("/sys/blocked"), "changed\n");
    // another Fs over the same root, and another thread, read the files as they are now
    Fs other(root.path());
    EXPECT_EQ(other.read("/proc/meminfo"), "MemTotal: 2 kB\n");
    std::optional<std::string> elsewhere;
    std::thread([&] { elsewhere = fs.read("/proc/meminfo"); }).join();
    EXPECT_EQ(elsewhere, "MemTotal: 2 kB\n");
  }
  EXPECT_EQ(fs.read("/proc/meminfo"), "MemTotal: 2 kB\n");
  EXPECT_EQ(fs.list("/sys/block"), (std::vector<std::string>{"vda", "vdb"}));
}

TEST(Fs, SharedReadsAskAgainForWhatWasMissingAndNestWithin) {
  TempDir root;
  Fs fs(root.path());
  mainboard::core::SharedReads outer(fs, {"/proc"});
  EXPECT_FALSE(fs.read("/proc/cpuinfo"));
  EXPECT_TRUE(fs.list("/proc").empty());
  root.write("proc/cpuinfo", "processor : 0\n");
  EXPECT_EQ(fs.read("/proc/cpuinfo"), "processor : 0\n");  // missing is not kept
  {
    mainboard::core::SharedReads all(fs, {"/"});  // "/" names everything
    root.write("etc/hostname", "a\n");
    EXPECT_EQ(fs.read_line("/etc/hostname"), "a");
    root.write("etc/hostname", "b\n");
    EXPECT_EQ(fs.read_line("/etc/hostname"), "a");
  }
  EXPECT_EQ(fs.read_line("/etc/hostname"), "b");  // the inner scope's reads went with it
  root.write("proc/cpuinfo", "processor : 1\n");
  EXPECT_EQ(fs.read("/proc/cpuinfo"), "processor : 0\n");  // the outer scope's stay
}

TEST(Fs, FixedReadsAreReadOnceAndKeptByThatFs) {
  TempDir root;
  root.write("sys/class/hwmon/hwmon0/name", "coretemp\n");
  root.write("sys/class/hwmon/hwmon0/temp1_input", "41000\n");
  root.mkdir("sys/devices/platform/coretemp.0");
  std::filesystem::create_directory_symlink("../../../devices/platform/coretemp.0",
                                            root.path() / "sys/class/hwmon/hwmon0/device");
  Fs fs(root.path());
  EXPECT_EQ(fs.read_line_fixed("/sys/class/hwmon/hwmon0/name"), "coretemp");
  EXPECT_EQ(fs.read_fixed("/sys/class/hwmon/hwmon0/name"), "coretemp\n");
  EXPECT_EQ(fs.list_fixed("/sys/class/hwmon/hwmon0"),
            (std::vector<std::string>{"device", "name", "temp1_input"}));
  EXPECT_TRUE(fs.is_dir_fixed("/sys/class/hwmon"));
  EXPECT_FALSE(fs.is_dir_fixed("/sys/class/powercap"));
  EXPECT_FALSE(fs.read_fixed("/sys/class/hwmon/hwmon0/temp1_label"));
  EXPECT_EQ(fs.link_name_fixed("/sys/class/hwmon/hwmon0/device"), "coretemp.0");

  // The machine changes: a fixed read answers as it first did, a read as the files are now.
  root.write("sys/class/hwmon/hwmon0/name", "k10temp\n");
  root.write("sys/class/hwmon/hwmon0/temp1_label", "Tctl\n");
  root.mkdir("sys/class/powercap");
  std::filesystem::remove(root.path() / "sys/class/hwmon/hwmon0/device");
  EXPECT_EQ(fs.read_line_fixed("/sys/class/hwmon/hwmon0/name"), "coretemp");
  EXPECT_EQ(fs.read_line("/sys/class/hwmon/hwmon0/name"), "k10temp");
  EXPECT_EQ(fs.list_fixed("/sys/class/hwmon/hwmon0"),
            (std::vector<std::string>{"device", "name", "temp1_input"}));
  EXPECT_FALSE(fs.is_dir_fixed("/sys/class/powercap"));  // what was missing stays missing
  EXPECT_FALSE(fs.read_fixed("/sys/class/hwmon/hwmon0/temp1_label"));
  EXPECT_EQ(fs.link_name_fixed("/sys/class/hwmon/hwmon0/device"), "coretemp.0");
  EXPECT_FALSE(fs.link_name("/sys/class/hwmon/hwmon0/device"));

  // Another Fs (another Machine) finds the machine as it is now; so do threads sharing one.
  Fs other(root.path());
  EXPECT_EQ(other.read_line_fixed("/sys/class/hwmon/hwmon0/name"), "k10temp");
  EXPECT_TRUE(other.is_dir_fixed("/sys/class/powercap"));
  std::vector<std::optional<std::string>> seen(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back(
        [&, i] { seen[i] = other.read_line_fixed("/sys/class/hwmon/hwmon0/temp1_label"); });
  for (auto& t : threads)
    t.join();
  for (const auto& v : seen)
    EXPECT_EQ(v, "Tctl");
}

TEST(Fs, RecordedSpaceAndWritable) {
  TempDir root;
  root.write(
      ".mainboard/space.json",
      R"({"/": {"size_bytes": 100, "free_bytes": 40}, "/scratch": {"size_bytes": 9, "free_bytes": 3}})");
  root.write(".mainboard/writable", "/tmp\n/scratch/me\n");
  Fs fs(root.path());
  EXPECT_EQ(fs.space("/scratch/me")->free_bytes, 3u);
  EXPECT_EQ(fs.space("/scratchy")->free_bytes, 40u);  // a prefix is not a parent directory
  EXPECT_EQ(fs.space("/home")->size_bytes, 100u);
  EXPECT_TRUE(fs.writable("/tmp"));
  EXPECT_FALSE(fs.writable("/var/tmp"));
}

TEST(Fs, MalformedSpaceRecordIsIgnored) {
  TempDir root;
  root.write(".mainboard/space.json", R"({"/": {"size_bytes": "big"}})");
  Fs fs(root.path());
  EXPECT_FALSE(fs.space("/"));
}

TEST(Fs, LiveSpaceAndWritable) {
  Fs fs("/");
  EXPECT_TRUE(fs.is_live());
  TempDir dir;
  auto space = fs.space(dir.path().string());
  ASSERT_TRUE(space);
  EXPECT_GT(space->size_bytes, 0u);
  EXPECT_TRUE(fs.writable(dir.path().string()));
  EXPECT_FALSE(fs.writable(dir.path().string() + "/missing"));
}

TEST(AtomicFile, ReplacesWholeFileAndReportsThePath) {
  TempDir dir;
  auto file = dir.path() / "out.json";
  mainboard::core::write_file_atomic(file, "first");
  mainboard::core::write_file_atomic(file, "second");
  std::ifstream in(file);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "second");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
  try {
    mainboard::core::write_file_atomic(dir.path() / "no/such/dir/file", "x");
    FAIL() << "expected an error";
  } catch (const mainboard::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/file"), std::string::npos);
  }
}
