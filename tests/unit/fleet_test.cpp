#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fake_gpus.hpp"
#include "mainboard/error.hpp"
#include "mainboard/fleet.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

bool has(const std::vector<Drift>& drift, const std::string& node, const std::string& trait,
         const std::string& value, const std::string& common) {
  for (const auto& d : drift)
    if (d.node == node && d.trait == trait && d.value == value && d.common == common) return true;
  return false;
}

}  // namespace

// Recorded hosts as nodes: three alike workstations and a two-socket server among them.
TEST(Fleet, RecordedHostsGroupAndTheOddOneIsCalledOut) {
  TempDir dir;
  for (const char* n : {"n1", "n2", "n4"})
    std::filesystem::create_directory_symlink(fixture_host("cgroup2-capped"), dir.path() / n);
  std::filesystem::create_directory_symlink(fixture_host("numa-2socket"), dir.path() / "n3");
  dir.write("n5.json", "{garbage");
  dir.write("notes.txt", "not a node");
  auto fleet = Fleet::from_directory(dir.path());
  ASSERT_EQ(fleet.nodes.size(), 5u);
  EXPECT_EQ(fleet.nodes[0].name, "n1");
  EXPECT_EQ(fleet.nodes[0].snapshot->hostname, "n1");
  EXPECT_FALSE(fleet.nodes[4].snapshot);
  EXPECT_NE(fleet.nodes[4].error.find("cannot read n5.json"), std::string::npos);
  auto groups = fleet.groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].nodes, (std::vector<std::string>{"n1", "n2", "n4"}));
  EXPECT_EQ(groups[1].nodes, (std::vector<std::string>{"n3"}));
  auto drift = fleet.differences();
  EXPECT_TRUE(has(drift, "n3", "memory", "512 GiB", "62.5 GiB"));
  EXPECT_TRUE(has(drift, "n3", "cgroup cap", "none", "8.00 GiB"));
  for (const auto& d : drift)
    EXPECT_EQ(d.node, "n3");  // the three alike nodes never differ
  auto text = fleet.text();
  EXPECT_NE(text.find("5 nodes, 4 answered, 2 groups of alike nodes"), std::string::npos) << text;
  EXPECT_NE(text.find("n3: memory 512 GiB, the other 3 have 62.5 GiB"), std::string::npos) << text;
  EXPECT_NE(text.find("No answer\n  n5: cannot read n5.json"), std::string::npos) << text;
  // The fleet document reads back.
  nlohmann::json j = fleet;
  EXPECT_EQ(j["schema_version"], kFleetSchemaVersion);
  EXPECT_EQ(j.get<Fleet>(), fleet);
}

// Saved snapshots as nodes: eight-GPU nodes where one has an older driver and one lost a GPU.
TEST(Fleet, DriverAndGpuCountDrift) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  auto base = m.snapshot({.toolchain = false});
  TempDir dir;
  for (int i = 1; i <= 6; ++i) {
    auto s = base;
    s.hostname = "g" + std::to_string(i);
    if (i == 2) s.cuda.driver_version = "535.104.05";
    if (i == 5) s.gpus.pop_back();
    dir.write("g" + std::to_string(i) + ".json", nlohmann::json(s).dump());
  }
  auto fleet = Fleet::from_directory(dir.path());
  auto drift = fleet.differences();
  ASSERT_EQ(drift.size(), 2u) << fleet.text();
  EXPECT_TRUE(has(drift, "g2", "driver", "535.104.05", "550.54.15"));
  EXPECT_TRUE(has(drift, "g5", "GPUs", "7 × NVIDIA H100 80GB HBM3", "8 × NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(fleet.groups().size(), 3u);
  EXPECT_NE(fleet.text().find("g5: GPUs 7 × NVIDIA H100 80GB HBM3, the other 5 have 8 × NVIDIA "
                              "H100 80GB HBM3"),
            std::string::npos)
      << fleet.text();
}

// A node file too large to be a snapshot (200 MB took 1 GB) or not JSON at all is that node's
// error, said for what it is; the other nodes are read.
TEST(Fleet, ANodeFileTooLargeOrBinaryIsThatNodesErrorOnly) {
  TempDir dir;
  Machine m([] {
    Machine::Options o;
    o.sysroot = fixture_host("numa-2socket");
    return o;
  }());
  dir.write("good.json", nlohmann::json(m.snapshot({.toolchain = false})).dump());
  auto big = dir.path() / "huge.json";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, 200u << 20);  // sparse
  dir.write("zipped.json", std::string("\x1f\x8b\x08\x00", 4));
  auto fleet = Fleet::from_directory(dir.path());
  ASSERT_EQ(fleet.nodes.size(), 3u);
  for (const auto& n : fleet.nodes) {
    if (n.name == "good") {
      EXPECT_TRUE(n.snapshot.has_value()) << n.error;
    } else if (n.name == "huge") {
      EXPECT_NE(n.error.find("is 209.7 MB: past the 64 MiB a node's snapshot may be"),
                std::string::npos)
          << n.error;
    } else {
      EXPECT_NE(n.error.find("not a snapshot: gzip-compressed data"), std::string::npos) << n.error;
    }
  }
}

TEST(Fleet, NothingToReadIsAnError) {
  TempDir empty;
  EXPECT_THROW(Fleet::from_directory(empty.path()), Error);
  EXPECT_THROW(Fleet::from_directory(empty.path() / "missing"), Error);
}

// What srun --label gives back: lines cut into labelled pieces, tasks interleaved, one task
// failing on standard error, one cut short.
TEST(Fleet, TaskOutputOfSrunIsReassembled) {
  MachineSnapshot s;
  s.hostname = "h";
  s.cpu.info.label = "CPU X";
  auto answer = Fleet::node_answer("n1", s);
  auto snapshot_line = answer.substr(answer.find('\n') + 1);
  snapshot_line.pop_back();  // its newline
  std::string out = "0: {\"node\":\"n1\"}\n2: {\"node\":\"n3\"}\n";
  // srun cuts the long line in three pieces, each with its label.
  auto third = snapshot_line.size() / 3;
  out += "0: " + snapshot_line.substr(0, third) + "\n";
  out += "2: " + snapshot_line.substr(0, 40) + "\n";  // n3 stopped mid-answer
  out += "0: " + snapshot_line.substr(third, third) + "\n";
  out += "0: " + snapshot_line.substr(2 * third) + "\n";
  std::string err = "1: mainboard: error: no such directory\n1: (run 'mainboard --help')\n";
  auto fleet = Fleet::from_tasks(out, err);
  ASSERT_EQ(fleet.nodes.size(), 3u);
  EXPECT_EQ(fleet.nodes[0].name, "n1");
  ASSERT_TRUE(fleet.nodes[0].snapshot);
  EXPECT_EQ(fleet.nodes[0].snapshot->cpu.info.label, "CPU X");
  EXPECT_EQ(fleet.nodes[1].name, "n3");
  EXPECT_NE(fleet.nodes[1].error.find("cannot be read"), std::string::npos);
  EXPECT_EQ(fleet.nodes[2].name, "task 1");
  EXPECT_EQ(fleet.nodes[2].error, "no such directory");
  // Stopped at the deadline: the node that had not finished says so.
  auto late = Fleet::from_tasks(out, "", 30.0);
  EXPECT_EQ(late.nodes[1].error, "timed out after 30 s");
  // Garbage and nothing at all.
  EXPECT_TRUE(Fleet::from_tasks("", "").nodes.empty());
  EXPECT_TRUE(Fleet::from_tasks(std::string(100000, 'x'), "no label\n").nodes.empty());
  auto odd = Fleet::from_tasks("0: [1,2]\n0: \"text\"\n0: {\"node\":7}\n", "");
  ASSERT_EQ(odd.nodes.size(), 1u);
  EXPECT_EQ(odd.nodes[0].name, "task 0");
  EXPECT_FALSE(odd.nodes[0].snapshot);
}

// `fleet check`: of four eight-GPU nodes, the one with another process on GPU 3 is not ready.
TEST(Fleet, CheckListsTheNodesThatAreNotReady) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  auto base = m.snapshot({.toolchain = false});
  // A clean node: no other process, no busy GPU, healthy memory, a light load.
  for (auto& g : base.gpus) {
    g.processes.clear();
    g.telemetry.utilization->compute_pct = 0;
    g.telemetry.thermal->throttle_reasons.clear();
    g.telemetry.memory->used_bytes = 0;
    g.health.reset();
  }
  base.cpu.load_1m = 0.2;
  TempDir dir;
  for (int i = 1; i <= 4; ++i) {
    auto s = base;
    if (i == 3) {
      s.gpus[3].processes.push_back({4242, "python3", 40ull << 30});
      s.gpus[3].telemetry.utilization->compute_pct = 97;
    }
    dir.write("c" + std::to_string(i) + ".json", nlohmann::json(s).dump());
  }
  auto fleet = Fleet::from_directory(dir.path());
  auto all = fleet.readiness();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].first, "c3");  // the node that is not ready first
  EXPECT_FALSE(all[0].second.ready());
  for (std::size_t i = 1; i < all.size(); ++i)
    EXPECT_TRUE(all[i].second.ready()) << all[i].first << ": " << all[i].second.text();
  auto text = fleet.readiness_text();
  EXPECT_NE(text.find("3 of 4 nodes ready"), std::string::npos) << text;
  EXPECT_NE(text.find("c3: NOT READY\n  GPU 3   gpu.processes     pid 4242 python3 (40.0 GiB)"),
            std::string::npos)
      << text;
}
