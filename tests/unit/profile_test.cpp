// The Profile model: analysis on hand-built evidence, save/load round trips and hostile files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/profile.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

/// One thread: step [0,100) containing forward [10,40) and backward [50,90); a second step
/// [100,200) with forward [110,140); nothing in [200,250).
Profile sample_profile() {
  Profile p;
  p.pid = 1234;
  p.start_ns = 0;
  p.end_ns = 250;
  p.paths = {"step", "step/forward", "step/backward"};
  p.span_stats = {{"step", "step", 2, 200, 100, 100, 100},
                  {"step/forward", "forward", 2, 60, 60, 30, 30},
                  {"step/backward", "backward", 1, 40, 40, 40, 40}};
  p.threads = {{0, 1234, "main"}};
  p.spans = {{0, 0, 0, 100}, {1, 0, 10, 40}, {2, 0, 50, 90}, {0, 0, 100, 200}, {1, 0, 110, 140}};
  return p;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

}  // namespace

TEST(Profile, StatsAndBottlenecks) {
  auto p = sample_profile();
  auto s = p.stats();
  EXPECT_EQ(s[0].path, "step");
  EXPECT_EQ(s[1].path, "step/forward");
  EXPECT_DOUBLE_EQ(s[1].avg_ns(), 30.0);
  EXPECT_EQ(p.bottlenecks(1).size(), 1u);
}

TEST(Profile, TimelineOverInnermostSpans) {
  auto t = sample_profile().timeline(10);
  EXPECT_EQ(t.source, "spans");
  // Busy: the leaves forward [10,40), backward [50,90), forward [110,140).
  EXPECT_EQ(t.busy_ns, 30 + 40 + 30);
  EXPECT_EQ(t.idle_ns, 250 - 100);
  ASSERT_FALSE(t.gaps.empty());
  EXPECT_EQ(t.gaps[0].start_ns, 140);  // [140, 250): the longest
  EXPECT_EQ(t.gaps[0].end_ns, 250);
  EXPECT_EQ(t.gaps[0].open_span, "step");  // its middle (195) is inside the second step
  auto between =
      std::find_if(t.gaps.begin(), t.gaps.end(), [](const IdleGap& g) { return g.start_ns == 40; });
  ASSERT_NE(between, t.gaps.end());
  EXPECT_EQ(between->end_ns, 50);
  EXPECT_EQ(between->open_span, "step");
  EXPECT_EQ(sample_profile().timeline(2).gaps.size(), 2u);
  EXPECT_NEAR(t.busy_pct(), 40.0, 1e-9);
}

TEST(Profile, TimelineIsTheSameInAnyOrderOfTheSpans) {
  // A parent and its first child start at the same instant; a second thread has its own nesting.
  // Recorded, spans are stored as they end (children first); merged, as they start.
  auto p = sample_profile();
  p.threads.push_back({1, 1235, "loader"});
  p.spans = {{1, 0, 0, 40},    {2, 0, 50, 90},   {0, 0, 0, 100},  {1, 0, 110, 140},
             {0, 0, 100, 200}, {1, 1, 150, 160}, {0, 1, 150, 230}};
  auto recorded = p.timeline(10);
  // Busy: thread 0's leaves [0,40) [50,90) [110,140) and thread 1's [150,160).
  EXPECT_EQ(recorded.busy_ns, 40 + 40 + 30 + 10);
  std::stable_sort(p.spans.begin(), p.spans.end(),
                   [](const SpanEvent& a, const SpanEvent& b) { return a.start_ns < b.start_ns; });
  auto merged = p.timeline(10);
  EXPECT_EQ(merged.busy_ns, recorded.busy_ns);
  ASSERT_EQ(merged.gaps.size(), recorded.gaps.size());
  for (std::size_t i = 0; i < merged.gaps.size(); ++i) {
    EXPECT_EQ(merged.gaps[i].start_ns, recorded.gaps[i].start_ns);
    EXPECT_EQ(merged.gaps[i].end_ns, recorded.gaps[i].end_ns);
  }
  std::reverse(p.spans.begin(), p.spans.end());  // the child after its same-start parent
  EXPECT_EQ(p.timeline(10).busy_ns, recorded.busy_ns);
}

TEST(Profile, TimelineOverDeviceUtilization) {
  auto p = sample_profile();
  p.device_samples = {{50, 0, std::nullopt, std::nullopt, 80.0, 10.0},
                      {100, 0, std::nullopt, std::nullopt, 0.0, 0.0},
                      {150, 0, std::nullopt, std::nullopt, 90.0, 20.0}};
  auto t = p.timeline();
  EXPECT_EQ(t.source, "device samples");
  EXPECT_EQ(t.busy_ns, 50 + 50);  // [0,50) and [100,150)
}

TEST(Profile, TimelineWithoutEvidenceIsEmpty) {
  Profile p;
  p.end_ns = 10;
  EXPECT_EQ(p.timeline().source, "");
  EXPECT_EQ(p.report().find("Timeline"), std::string::npos);
}

TEST(Profile, DiffNewVanishedAndChanged) {
  auto base = sample_profile();
  auto next = sample_profile();
  next.span_stats[0].total_ns = 500;  // step got slower by 300
  next.span_stats[2] = {"step/optimizer", "optimizer", 1, 25, 25, 25, 25};
  next.paths[2] = "step/optimizer";
  auto d = next.diff(base);
  ASSERT_EQ(d.regions.size(), 4u);
  EXPECT_EQ(d.regions[0].path, "step");
  EXPECT_EQ(d.regions[0].total_change_ns(), 300);
  EXPECT_DOUBLE_EQ(*d.regions[0].total_change_pct(), 150.0);
  auto find = [&](const std::string& path) {
    return *std::find_if(d.regions.begin(), d.regions.end(),
                         [&](const RegionDiff& r) { return r.path == path; });
  };
  EXPECT_EQ(find("step/backward").kind, RegionDiff::Kind::removed);
  EXPECT_EQ(find("step/optimizer").kind, RegionDiff::Kind::added);
  EXPECT_FALSE(find("step/optimizer").total_change_pct());
  EXPECT_EQ(find("step/forward").total_change_ns(), 0);
  auto text = d.report();
  EXPECT_NE(text.find("new"), std::string::npos);
  EXPECT_NE(text.find("gone"), std::string::npos);
  EXPECT_NE(text.find("+150.0 %"), std::string::npos);
}

namespace {
/// A profile of stack samples only: each entry a stack (innermost first) and its sample count.
Profile sampled(const std::vector<std::pair<std::vector<std::string>, int>>& stacks) {
  Profile p;
  std::map<std::string, std::uint32_t> index;
  for (const auto& [frames, count] : stacks) {
    std::vector<std::uint32_t> stack;
    for (const auto& f : frames) {
      auto [it, fresh] = index.emplace(f, static_cast<std::uint32_t>(p.frames.size()));
      if (fresh) p.frames.push_back(StackFrame{f, "app", "", 0, false});
      stack.push_back(it->second);
    }
    p.stacks.push_back(stack);
    for (int i = 0; i < count; ++i)
      p.samples.push_back(StackSample{i, 0, static_cast<std::uint32_t>(p.stacks.size() - 1)});
  }
  return p;
}
}  // namespace

TEST(Profile, DiffComparesStackSamplesFunctionByFunctionInShares) {
  // Base: 100 samples, parse 60 % self, compute 40 %. New: 50 samples (a shorter run), parse
  // 20 %, compute 64 %, and a new function, cache, 16 %; main is the root everywhere.
  auto base = sampled({{{"parse", "main"}, 60}, {{"compute", "main"}, 40}});
  auto next = sampled({{{"parse", "main"}, 10}, {{"compute", "main"}, 32}, {{"cache", "main"}, 8}});
  auto d = next.diff(base);
  ASSERT_EQ(d.functions.size(), 4u);
  EXPECT_EQ(d.functions[0].function, "parse");  // −40 points: the largest change first
  EXPECT_DOUBLE_EQ(d.functions[0].self_change(), -40.0);
  EXPECT_EQ(d.functions[1].function, "compute");
  EXPECT_DOUBLE_EQ(d.functions[1].self_change(), 24.0);
  EXPECT_EQ(d.functions[2].function, "cache");
  EXPECT_EQ(d.functions[2].kind, DiffKind::added);
  EXPECT_DOUBLE_EQ(d.functions[2].self_pct, 16.0);
  EXPECT_EQ(d.functions[3].function, "main");
  EXPECT_DOUBLE_EQ(d.functions[3].total_change(), 0.0);  // 100 % of both
  auto gone = base.diff(next);
  auto cache = std::find_if(gone.functions.begin(), gone.functions.end(),
                            [](const FunctionDiff& f) { return f.function == "cache"; });
  ASSERT_NE(cache, gone.functions.end());
  EXPECT_EQ(cache->kind, DiffKind::removed);
  auto text = d.report();
  EXPECT_NE(text.find("function (stack samples)"), std::string::npos) << text;
  EXPECT_NE(text.find("-40.0"), std::string::npos) << text;
  EXPECT_NE(text.find("new"), std::string::npos) << text;
  nlohmann::json j = d;
  EXPECT_EQ(j["functions"].size(), 4u);
  EXPECT_EQ(j["functions"][0]["function"], "parse");
  EXPECT_EQ(Profile{}.diff(Profile{}).report(),
            "nothing to compare: no regions, kernels or stack samples in either profile\n");
}

TEST(Profile, ReportHasOnlyPopulatedSections) {
  auto p = sample_profile();
  auto text = p.report();
  EXPECT_NE(text.find("Regions"), std::string::npos);
  EXPECT_NE(text.find("step/forward"), std::string::npos);
  EXPECT_NE(text.find("Timeline (spans)"), std::string::npos);
  EXPECT_EQ(text.find("Device"), std::string::npos);
  EXPECT_EQ(text.find("Not collected"), std::string::npos);
  p.unavailable = {"device: no GPU at index 0 (0 found)"};
  EXPECT_NE(p.report().find("Not collected"), std::string::npos);
  // A share above 100 % (threads in a region at once) is explained, and only then.
  EXPECT_EQ(text.find("above 100 %"), std::string::npos);
  p.span_stats[0].total_ns = 3 * (p.end_ns - p.start_ns);
  EXPECT_NE(p.report().find("above 100 % when several threads were in it at once"),
            std::string::npos);
}

TEST(Profile, SaveLoadRoundTrip) {
  TempDir dir;
  auto p = sample_profile();
  p.device_samples = {{50, 1, 1024, 2048, 55.5, 12.0}};
  p.unavailable = {"x"};
  p.dropped_spans = 3;
  p.frames = {{"main", "a.out", "", 0, false}};
  p.stacks = {{0}};
  p.samples = {{-5, 0, 0}, {7, 0, 0}};  // written as text, read straight back
  p.spans.push_back({0, 0, INT64_MIN + 1, INT64_MAX});
  p.target_exit = TargetExit{137, 9, false};
  p.save(dir.path() / "run.json");
  EXPECT_EQ(Profile::load(dir.path() / "run.json"), p);
  EXPECT_EQ(Profile::parse(nlohmann::json(p).dump()), p);  // as the document writes them
  // A profile written before targets' ends were recorded (or of an attach) has none.
  auto older = nlohmann::json(p);
  older.erase("target_exit");
  EXPECT_FALSE(Profile::parse(older.dump()).target_exit);
  // Atomic: no temporary file left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(Profile, ATargetThatFailedSaysHowFirst) {
  EXPECT_EQ((TargetExit{2, 0, false}).summary(), "exited with status 2");
  EXPECT_EQ((TargetExit{137, 9, false}).summary(), "was killed by signal 9 (Killed)");
  EXPECT_EQ((TargetExit{143, 15, true}).summary(), "was ended by its timeout");
  EXPECT_FALSE((TargetExit{}).failed());
  auto p = sample_profile();
  p.command = "train";
  EXPECT_EQ(p.report().rfind("The target", 0), std::string::npos);  // none: not a run
  p.target_exit = TargetExit{0, 0, false};
  EXPECT_EQ(p.report().rfind("The target", 0), std::string::npos);  // a run that succeeded
  p.target_exit = TargetExit{1, 0, false};
  EXPECT_EQ(p.report().rfind("The target (train) exited with status 1: the profile holds what it "
                             "did until then.\n\n",
                             0),
            0u)
      << p.report();
}

TEST(Profile, HostileAndBrokenFilesGiveErrorsNamingTheFile) {
  TempDir dir;
  auto p = sample_profile();
  p.save(dir.path() / "good.json");
  std::string good = read(dir.path() / "good.json");
  auto expect_error = [&](const std::string& name, const std::string& content,
                          const std::string& words) {
    auto file = dir.write(name, content);
    try {
      (void)Profile::load(file);
      FAIL() << name << " loaded";
    } catch (const Error& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(name), std::string::npos) << what;
      EXPECT_NE(what.find(words), std::string::npos) << what;
    }
  };
  expect_error("empty.json", "", "empty");
  expect_error("truncated.json", good.substr(0, good.size() / 2), "truncated");
  expect_error("corrupt.json", "{\"schema_version\": 1, @}", "corrupt");
  // An array is read as a trace's events (a profile is an object).
  expect_error("array.json", "[1, 2, 3]", "trace event 0 is not an object but 1");
  expect_error("version.json", "{\"schema_version\": 99}", "schema_version 99");
  // Found by the fuzzer: a number no integer type holds is an error, not a crash.
  expect_error("overflow.json", "{\"schema_version\": 1, \"end_ns\": 57074335e52082}",
               "not a readable profile");
  expect_error("deep.json", std::string(100000, '[') + std::string(100000, ']'),
               "trace event 0 is not an object but an array");
  expect_error("deep-object.json",
               "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}",
               "nested too deeply");
  auto j = nlohmann::json::parse(good);
  j["spans"][0][0] = 42;  // a path index past the end
  expect_error("index.json", j.dump(), "names path 42");
  j = nlohmann::json::parse(good);
  j["spans"][1] = {1, 0, 50, 10};
  expect_error("backwards.json", j.dump(), "ends before it starts");
  // The stored spans and stack samples are read straight into their vectors: each wrong shape
  // is refused as the document reader refused it.
  for (auto [name, bad, words] : std::vector<std::tuple<std::string, nlohmann::json, std::string>>{
           {"short-span.json", nlohmann::json::array({0, 0, 5}), "expected [path, thread"},
           {"long-span.json", nlohmann::json::array({0, 0, 5, 6, 7}), "expected [path, thread"},
           {"text-span.json", nlohmann::json::array({0, "main", 5, 6}), "expected [path"},
           {"float-span.json", nlohmann::json::array({0, 0, 5.5, 6}), "expected [path"},
           {"negative-span.json", nlohmann::json::array({-1, 0, 5, 6}), "expected [path"},
           {"nested-span.json", nlohmann::json::array({0, 0, nlohmann::json::array({5}), 6}),
            "expected [path"},
           {"object-span.json", nlohmann::json::object({{"path", 0}}), "expected [path"},
           {"wide-span.json", nlohmann::json::array({1ull << 33, 0, 5, 6}), "index out of range"},
           {"huge-time.json", nlohmann::json::array({0, 0, 18446744073709551615ull, 6}),
            "expected [path"}}) {
    j = nlohmann::json::parse(good);
    j["spans"][0] = bad;
    expect_error(name, j.dump(), words);
  }
  j = nlohmann::json::parse(good);
  j["samples"] = nlohmann::json::array({nlohmann::json::array({5, 0})});
  expect_error("short-sample.json", j.dump(), "expected [t_ns, thread, stack]");
  j["samples"] = nlohmann::json::array({nlohmann::json::array({5, 0, 1ull << 40})});
  expect_error("wide-sample.json", j.dump(), "StackSample: index out of range");
  j["samples"] = 7;
  expect_error("number-samples.json", j.dump(), "samples");
  j = nlohmann::json::parse(good);
  j.erase("paths");
  expect_error("missing.json", j.dump(), "Profile.paths: missing");
  j = nlohmann::json::parse(good);
  j["span_stats"][0]["calls"] = -1;
  expect_error("negative.json", j.dump(), "calls");
  // JSON with another writer's spacing, and leading zeros (not JSON) in the bulk.
  EXPECT_EQ(Profile::parse(nlohmann::json::parse(good).dump(2)), Profile::parse(good));
  j = nlohmann::json::parse(good);
  auto spaced = j.dump(1, '\t');
  EXPECT_EQ(Profile::parse(spaced), Profile::parse(good));
  auto zero = good;
  zero.replace(zero.find("\"spans\":[[") + 10, 1, "00");
  expect_error("zero.json", zero, "corrupt");
  // Cut short anywhere, a profile is refused with a reason (never read as a smaller one).
  for (std::size_t n = 0; n + 1 < good.size(); ++n) {
    try {
      (void)Profile::parse(std::string_view(good).substr(0, n), "cut.json");
      ADD_FAILURE() << "a profile cut at byte " << n << " was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cut.json"), std::string::npos) << e.what();
    }
  }
  try {
    (void)Profile::load(dir.path() / "absent.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("absent.json"), std::string::npos);
  }
}

// What is not a profile is said for what it is, and a file too large is refused from its size,
// before a byte is read (a 1 GB file took 4.2 GB of memory; 1 GB of NUL bytes was "empty").
TEST(Profile, WhatIsNotAProfileIsNamedAndAFileTooLargeIsRefusedUnread) {
  TempDir dir;
  auto expect_error = [&](const std::filesystem::path& file, const std::string& words) {
    try {
      (void)Profile::load(file);
      FAIL() << file << " loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_error(dir.write("nul.json", std::string(1 << 20, '\0')),
               "nul.json: not a profile: only NUL bytes");
  expect_error(dir.write("mixed.json", std::string("{\"a\": 1}\0\0", 10)),
               "binary data (a NUL byte at offset 8)");
  // gzip is read (a profile or a trace gzipped), and gzip's header alone is said to be damaged.
  expect_error(dir.write("p.json.gz", std::string("\x1f\x8b\x08\x00rest", 8)),
               "p.json.gz: the gzip data is empty or damaged");
  expect_error(dir.write("perf.data", "PERFILE2\x68\x00"), "a perf.data file");
  // Sparse: 1.5 GiB of size, no disk.
  auto big = dir.path() / "big.json";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, 3ull << 29);
  expect_error(big, "big.json is 1.6 GB: past the 1 GiB a profile may be");
  expect_error(dir.path(), "it is a directory");
}

TEST(Profile, PerfettoJsonIsWellFormed) {
  auto p = sample_profile();
  p.device_samples = {{50, 0, 1024, 2048, 55.5, 12.0}};
  p.paths[1] = "step/for\"ward";  // quoting survives
  auto j = nlohmann::json::parse(p.perfetto_json());
  const auto& events = j["traceEvents"];
  int complete = 0, counters = 0, thread_names = 0;
  for (const auto& e : events) {
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_EQ(e["pid"], 1234);
      EXPECT_EQ(e["tid"], 1234);
    }
    if (e["ph"] == "C") ++counters;
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      ++thread_names;
      EXPECT_EQ(e["args"]["name"], "main");
    }
  }
  EXPECT_EQ(complete, 5);
  EXPECT_EQ(counters, 3);
  EXPECT_EQ(thread_names, 1);
  // Microseconds from the start, to about a nanosecond (1/1024 µs).
  EXPECT_EQ(events[2]["ts"].get<double>(), 0.0);
  EXPECT_NEAR(events[2]["dur"].get<double>(), 0.1, 0.001);
  EXPECT_EQ(j["metadata"]["producer"], "mainboard");
}

// Seen in the Chrome DevTools engine under load: with decimal nanoseconds, 19804.096 + 100.06
// ends after 19304.036 + 600.12 in binary, so an inner span ending with its parent was dropped.
TEST(Profile, PerfettoEndsNeverPassTheirParentOrNextSibling) {
  Profile p;
  p.pid = 7;
  p.start_ns = 0;
  p.end_ns = 30'000'000;
  p.paths = {"step", "step/backward", "step/backward/allreduce"};
  p.threads = {{0, 7, "main"}};
  p.spans = {{2, 0, 19'804'096, 19'904'156},
             {1, 0, 19'304'036, 19'904'156},
             {0, 0, 19'003'896, 19'904'176},
             {0, 0, 19'904'176, 20'804'445}};
  auto j = nlohmann::json::parse(p.perfetto_json());
  std::vector<std::pair<double, double>> x;  // [ts, ts + dur) as a viewer computes them
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X")
      x.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
  ASSERT_EQ(x.size(), 4u);
  EXPECT_LE(x[0].second, x[1].second);  // allreduce within backward
  EXPECT_LE(x[1].second, x[2].second);  // backward within step
  EXPECT_LE(x[2].second, x[3].first);   // the next step starts after this one ends
  EXPECT_NEAR(x[0].first, 19804.096, 0.001);
  EXPECT_NEAR(x[0].second - x[0].first, 100.06, 0.001);
  // Long profiles too: a day in, still exact and still to about a nanosecond.
  p.spans = {{1, 0, 86'400'000'000'001, 86'400'000'000'999}};
  j = nlohmann::json::parse(p.perfetto_json());
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") {
      EXPECT_NEAR(e["ts"].get<double>(), 86'400'000'000.001, 0.001);
      EXPECT_NEAR(e["dur"].get<double>(), 0.998, 0.001);
    }
}

// A profile whose auto-instrumented functions cannot be named here (their module is not on this
// machine) loads with the placeholders and keeps the maps, so a reader that has the module can
// still name them.
TEST(Profile, UnnamedFunctionsKeepTheirMaps) {
  auto p = Profile::load(MAINBOARD_FIXTURES "/../../fuzz/corpus/function-maps.json");
  ASSERT_EQ(p.paths.size(), 3u);
  EXPECT_EQ(p.paths[1], "@0x55d0c0001139/@0x55d0c00011a0");
  EXPECT_EQ(p.function_maps.size(), 2u);
  ASSERT_EQ(p.counters.size(), 1u);
  EXPECT_EQ(p.counters[0].limiter(), "latency");
}

// Version 3 files wrote counters in their own shape (duration_ns, no summary or launch shape).
TEST(Profile, VersionThreeCountersLoadAsKernelSummaries) {
  auto j = nlohmann::json::parse(R"({"schema_version": 3, "pid": 1, "start_ns": 0, "end_ns": 5,
    "paths": [], "span_stats": [], "spans": [], "dropped_spans": 0, "threads": [],
    "device_samples": [], "activity_names": [], "activities": [], "dropped_activities": 0,
    "counters": [{"name": "gemm", "calls": 4, "duration_ns": 900, "sm_throughput_pct": 85.0,
                  "dram_throughput_pct": 30.0, "achieved_occupancy_pct": null}],
    "frames": [], "stacks": [], "samples": [], "sample_hz": 0, "lost_samples": 0,
    "unavailable": [], "machine": null})");
  auto p = Profile::parse(j.dump());
  EXPECT_EQ(p.schema_version, kProfileSchemaVersion);
  ASSERT_EQ(p.counters.size(), 1u);
  EXPECT_EQ(p.counters[0].total_ns, 900);
  EXPECT_EQ(p.counters[0].calls, 4u);
  EXPECT_EQ(p.counters[0].limiter(), "compute");
  EXPECT_TRUE(p.function_maps.empty());
}
