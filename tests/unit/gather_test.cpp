// Gather this machine, then probe the gathered tree: it must describe the same host.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "mainboard/error.hpp"
#include "mainboard/gather.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

/// This host's identity and what does not change from one reading to the next: the snapshot
/// without live figures (memory in use, loads, clocks, free space, GPU telemetry) and times.
nlohmann::json identity_of(const MachineSnapshot& s) {
  nlohmann::json j = s;
  for (const char* live : {"timestamp_ns", "unix_time_ns", "memory", "cgroup_memory", "hostname"})
    j.erase(live);
  j["cpu"].erase("clocks");
  for (const char* load : {"load_1m", "load_5m", "load_15m"})
    j["cpu"].erase(load);
  j["memory_hardware"].erase("swap_used_bytes");
  // Pressure moves by the second: which resources have a reading (and a "full" line) is kept.
  for (const char* resource : {"cpu", "memory", "io"})
    if (auto& r = j["pressure"][resource]; !r.is_null()) r = {{"full", !r["full"].is_null()}};
  // Temperatures and free huge pages move by the second: which sensors and pools there are is
  // kept.
  if (auto& t = j["temperatures"]; t.contains("sensors"))
    for (auto& sensor : t["sensors"])
      sensor.erase("celsius");
  if (auto& h = j["huge_pages"]; h.contains("pools"))
    for (auto& pool : h["pools"])
      for (const char* moving : {"free", "reserved", "surplus"})
        pool.erase(moving);
  // A recorded host never loads a driver library of this machine: where there is none here,
  // the replay says why in its own words.
  for (const char* lib : {"nvml", "cuda_driver"})
    if (!j["cuda"][lib]["found"].get<bool>()) j["cuda"][lib].erase("reason");
  for (auto& d : j["diagnostics"]) {
    d.erase("duration_ns");
    if (d["probe"] == "gpu:nvidia" && d["status"] == "unsupported") d.erase("reason");
  }
  for (auto& f : j["disk"]["filesystems"]) {
    f.erase("free_bytes");
    auto device = f["device"].get<std::string>();  // network servers are scrubbed
    if (auto colon = device.find(":/"); colon != std::string::npos && device[0] != '/')
      f["device"] = "server" + device.substr(colon);
  }
  for (auto& c : j["scratch"]["candidates"])
    c.erase("free_bytes");
  // Traffic moves by the packet: the byte and error counters of NICs and InfiniBand ports.
  if (j["network"].contains("interfaces"))
    for (auto& i : j["network"]["interfaces"]) {
      i.erase("received_bytes");
      i.erase("transmitted_bytes");
    }
  if (j["infiniband"].contains("devices"))
    for (auto& d : j["infiniband"]["devices"])
      for (auto& p : d["ports"]) {
        p.erase("received_bytes");
        p.erase("transmitted_bytes");
        p.erase("errors");
      }
  j["scratch"].erase("free_bytes");
  for (const char* units : {"gpus", "npus"})
    for (auto& u : j[units]) {
      u.erase("telemetry");
      u.erase("processes");
      u.erase("pcie");
      u.erase("fan_speed_pct");
      u.erase("memory_regions");
    }
  return j;
}

}  // namespace

// Every probe's identity reading of this machine survives gathering: the whole snapshot is
// compared, so a probe that reads something gather does not record cannot go unnoticed.
TEST(Gather, TheGatheredTreeReproducesThisHost) {
  TempDir dir;
  auto tree = dir.path() / "host";
  auto report = gather_host(tree, {.hostname = "replayed"});
  EXPECT_GT(report.files, 20u);

  Machine::Options lo;
  lo.toolchain_cache = false;
  Machine live(lo);
  Machine::Options o;
  o.sysroot = tree;
  Machine replay(o);
  auto a = live.snapshot();
  auto b = replay.snapshot();

  EXPECT_EQ(b.hostname, "replayed");  // the real hostname is never written
  EXPECT_EQ(b.cpu.info.topology_source, mainboard::TopologySource::hwloc);
  EXPECT_EQ(b.memory->total_bytes, a.memory->total_bytes);
  EXPECT_EQ(b.cgroup_memory.value_or({}).limit_bytes, a.cgroup_memory.value_or({}).limit_bytes);
  auto before = identity_of(a), after = identity_of(b);
  EXPECT_TRUE(after == before) << nlohmann::json::diff(before, after).dump(1);
}

TEST(Gather, ScrubsAndRefusesToOverwrite) {
  TempDir dir;
  dir.write("existing", "x");
  EXPECT_THROW(gather_host(dir.path()), Error);
  try {
    gather_host(dir.path() / "new", {.sysroot = "/nonexistent-host"});
    ADD_FAILURE() << "gathered a host that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-host: not a directory"), std::string::npos)
        << e.what();
  }
  auto report = gather_host(dir.path(), {.hostname = "anon", .force = true});
  EXPECT_GT(report.files, 0u);
  std::ifstream in(dir.path() / "proc/sys/kernel/hostname");
  std::string name;
  std::getline(in, name);
  EXPECT_EQ(name, "anon");
  std::ifstream cmds(dir.path() / ".mainboard/commands.json");
  auto j = nlohmann::json::parse(cmds);
  for (const auto& c : j["commands"])
    EXPECT_EQ(c["stdout"].get<std::string>().find("Serial Number: "), std::string::npos)
        << "a serial number was recorded";
}
