// PyTorch profiler traces read as profiles: a torch 2.x (Kineto) trace composed by hand from the
// format's documentation, a trace Debian's torch 1.13 (without Kineto) wrote, the merge of a
// job's traces with their clocks aligned by what they share, and traces that are broken.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/zlib.hpp"
#include "mainboard/error.hpp"
#include "mainboard/profile.hpp"
#include "test_util.hpp"
#include "traces/kineto.hpp"

using namespace mainboard;

namespace {

const std::string kTorch2 = MAINBOARD_FIXTURES "/traces/torch2/";
const std::string kRank0 = kTorch2 + "host0_4242.1764979223123.pt.trace.json";
const std::string kRank1 = kTorch2 + "host1_4243.1764979223456.pt.trace.json.gz";
const std::string kLegacy =
    MAINBOARD_FIXTURES "/traces/torch1.13/rank3.1796521837638.pt.trace.json";
constexpr std::int64_t kUs = 1000;

const SpanStat* stat(const Profile& p, const std::string& path) {
  for (const auto& s : p.span_stats)
    if (s.path == path) return &s;
  return nullptr;
}

bool any_says(const std::vector<std::string>& lines, const std::string& what) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(what) != std::string::npos; });
}

std::string load_error(const std::filesystem::path& file) {
  try {
    Profile::load(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(Traces, Torch2StepsOperatorsAndGpuActivity) {
  auto p = Profile::load(kRank0);
  ASSERT_TRUE(p.source);
  EXPECT_EQ(*p.source, "torch.profiler (Kineto)");
  ASSERT_TRUE(p.rank);
  EXPECT_EQ(p.rank->rank, 0);
  EXPECT_EQ(p.rank->world_size, 2);
  EXPECT_EQ(p.rank->source, "distributedInfo (nccl)");
  EXPECT_EQ(p.pid, 4242);
  EXPECT_EQ(p.command, "python3");
  ASSERT_EQ(p.threads.size(), 1u);  // the CPU thread; the streams' events are GPU activity
  EXPECT_EQ(p.threads[0].tid, 4242);
  EXPECT_EQ(p.threads[0].name, "thread 4242 (python3)");

  // Steps: "ProfilerStep#3" and "#4" are one path, the operators nested under them by time.
  const auto* step = stat(p, "ProfilerStep");
  ASSERT_TRUE(step);
  EXPECT_EQ(step->calls, 2u);
  EXPECT_EQ(step->total_ns, 20'000 * kUs);
  const auto* data =
      stat(p, "ProfilerStep/enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
  ASSERT_TRUE(data);
  EXPECT_EQ(data->total_ns, 4'000 * kUs);
  const auto* launch = stat(p, "ProfilerStep/aten::mm/cudaLaunchKernel");
  ASSERT_TRUE(launch);
  EXPECT_EQ(launch->calls, 2u);
  EXPECT_EQ(launch->total_ns, 40 * kUs);
  const auto* mm = stat(p, "ProfilerStep/aten::mm");
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->self_ns, 2 * (500 - 20) * kUs);  // less its runtime call
  EXPECT_TRUE(stat(p, "ProfilerStep/nccl:all_reduce/cudaLaunchKernel"));
  EXPECT_TRUE(stat(p, "ProfilerStep/Optimizer.step#SGD.step"));
  // The profiler's own window ("Trace") and the Python functions are not spans.
  for (const auto& s : p.span_stats) {
    EXPECT_EQ(s.path.find("PyTorch Profiler"), std::string::npos) << s.path;
    EXPECT_EQ(s.path.find("train.py"), std::string::npos) << s.path;
  }
  EXPECT_EQ(p.spans.size(), 2u * 9);

  // Kernels, copies and sets on their devices and streams, with their launch correlation.
  ASSERT_EQ(p.activities.size(), 8u);
  auto find = [&](const std::string& prefix) -> const GpuActivity* {
    for (const auto& a : p.activities)
      if (p.activity_names[a.name].rfind(prefix, 0) == 0) return &a;
    return nullptr;
  };
  const auto* gemm = find("void gemm_kernel");
  ASSERT_TRUE(gemm);
  EXPECT_EQ(gemm->kind, GpuActivity::Kind::kernel);
  EXPECT_EQ(gemm->start_ns, (1000 + 6300) * kUs);
  EXPECT_EQ(gemm->duration_ns(), 1500 * kUs);
  EXPECT_EQ(gemm->stream, 7u);
  EXPECT_EQ(gemm->correlation, 501u);
  EXPECT_EQ(gemm->grid, (std::array<std::uint32_t, 3>{64, 1, 1}));
  EXPECT_EQ(gemm->block, (std::array<std::uint32_t, 3>{256, 1, 1}));
  EXPECT_EQ(gemm->registers_per_thread, 128u);
  EXPECT_EQ(gemm->static_shared_bytes, 16384u);
  const auto* copy = find("Memcpy HtoD");
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->kind, GpuActivity::Kind::memcpy);
  EXPECT_EQ(copy->bytes, 1048576u);
  const auto* set = find("Memset");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->kind, GpuActivity::Kind::memset);
  const auto* nccl = find("ncclDevKernel_AllReduce");
  ASSERT_TRUE(nccl);
  EXPECT_EQ(nccl->stream, 20u);
  EXPECT_EQ(p.trace_report(5).kernel_count, 4u);

  // What the trace does not carry is said.
  EXPECT_TRUE(any_says(p.unavailable, "samples: a PyTorch profiler trace records operators"))
      << ::testing::PrintToString(p.unavailable);
  EXPECT_TRUE(any_says(p.unavailable, "2 Python function events"));
  EXPECT_TRUE(p.samples.empty());
}

TEST(Traces, GzippedTraceReadsTheSame) {
  auto p = Profile::load(kRank1);
  ASSERT_TRUE(p.rank);
  EXPECT_EQ(p.rank->rank, 1);
  EXPECT_EQ(p.pid, 4243);
  EXPECT_EQ(stat(p, "ProfilerStep/enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__")
                ->total_ns,
            12'000 * kUs);
  EXPECT_EQ(p.activities.size(), 8u);
}

TEST(Traces, MergeAlignsByCollectiveEndsAndNamesTheStraggler) {
  std::vector<Profile> ranks{Profile::load(kRank1), Profile::load(kRank0)};
  auto job = Profile::merge_ranks(std::move(ranks), {kRank1, kRank0});
  ASSERT_EQ(job.processes.size(), 2u);
  EXPECT_EQ(job.processes[0].alignment, "reference");
  EXPECT_EQ(job.processes[1].alignment, "collective ends");
  // Rank 1's clock runs 2.5 ms ahead of rank 0's: its NCCL kernels' ends say so exactly.
  EXPECT_EQ(job.processes[1].offset_ns, -2'500 * kUs);
  EXPECT_TRUE(any_says(job.unavailable,
                       "aligned with rank 0's by the ends of their collectives "
                       "(NCCL kernels, 2 matched"))
      << ::testing::PrintToString(job.unavailable);

  auto r = job.ranks();
  EXPECT_EQ(r.step, "ProfilerStep");
  ASSERT_TRUE(r.straggler) << r.verdict;
  EXPECT_EQ(r.straggler->rank, 1);
  EXPECT_EQ(r.straggler->phase,
            "ProfilerStep/enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
  EXPECT_EQ(r.straggler->phase_kind, "data loading");
  EXPECT_EQ(r.straggler->phase_excess_ns, 8'000 * kUs);
  EXPECT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.straggler->slowest_steps, 2u);

  // Holistic Trace Analysis's breakdown of rank 0, from its GPU activity: the window runs from
  // its first copy (2.06 ms into step 1) to its last all-reduce's end (9 ms into step 2).
  ASSERT_EQ(r.breakdown.size(), 2u);
  const auto& b = r.breakdown[0];
  EXPECT_EQ(b.rank, 0);
  EXPECT_EQ(b.source, "gpu kernels");
  EXPECT_EQ(b.window_ns, (11'000 + 9'000 - (1'000 + 2'060)) * kUs);
  EXPECT_EQ(b.compute_ns, 2 * 1'500 * kUs);
  EXPECT_EQ(b.communication_ns, 2 * 1'200 * kUs);
  EXPECT_EQ(b.memory_ns, 2 * 200 * kUs);  // the set runs inside the all-reduce: not counted
  EXPECT_EQ(b.idle_ns, b.window_ns - (3'000 + 2'400 + 400) * kUs);
  ASSERT_TRUE(b.overlap_pct);
  EXPECT_DOUBLE_EQ(*b.overlap_pct, 0.0);
  EXPECT_NEAR(b.compute_pct + b.non_compute_pct + b.idle_pct, 100.0, 1e-9);
  // Rank 1 arrives late at its all-reduce: its kernels run 200 µs, not 1.2 ms.
  EXPECT_EQ(r.breakdown[1].communication_ns, 2 * 200 * kUs);
  EXPECT_NE(job.report().find("Time breakdown (gpu kernels"), std::string::npos);
}

// A collective one trace lacks (its end came as the profiler stopped) moves nothing: ends are
// matched by nearness from the first steps' difference, not by their order.
TEST(Traces, ACollectiveMissingFromOneTraceDoesNotShiftTheAlignment) {
  auto rank0 = Profile::load(kRank0);
  auto rank1 = Profile::load(kRank1);
  auto& a = rank1.activities;
  auto first_nccl = std::find_if(a.begin(), a.end(), [&](const GpuActivity& x) {
    return rank1.activity_names[x.name].rfind("nccl", 0) == 0;
  });
  ASSERT_NE(first_nccl, a.end());
  a.erase(first_nccl);
  auto job = Profile::merge_ranks({rank0, rank1}, {kRank0, kRank1});
  EXPECT_EQ(job.processes[1].alignment, "collective ends");
  EXPECT_EQ(job.processes[1].offset_ns, -2'500 * kUs);
}

TEST(Traces, TorchWithoutKinetoTakesItsRankFromTheFileName) {
  auto p = Profile::load(kLegacy);
  ASSERT_TRUE(p.source);
  EXPECT_EQ(*p.source, "torch.profiler (without Kineto)");
  ASSERT_TRUE(p.rank);
  EXPECT_EQ(p.rank->rank, 3);
  EXPECT_EQ(p.rank->source, "file name");
  EXPECT_TRUE(any_says(p.unavailable, "from the file name rank3.1796521837638.pt.trace.json"))
      << ::testing::PrintToString(p.unavailable);
  const auto* step = stat(p, "ProfilerStep");
  ASSERT_TRUE(step);
  EXPECT_EQ(step->calls, 2u);
  const auto* data = stat(p, "ProfilerStep/data");
  ASSERT_TRUE(data);
  EXPECT_EQ(data->calls, 2u);
  EXPECT_GE(data->total_ns, 2 * 2'000 * kUs);  // each slept 2 ms
  EXPECT_TRUE(stat(p, "ProfilerStep/forward/aten::linear"));

  // Another pattern; one that finds nothing leaves it without a rank, and says so.
  EXPECT_TRUE(traces::name_rank_from_file(p, "w-7.rank3.json", "w-([0-9]+)"));
  EXPECT_EQ(p.rank->rank, 7);
  EXPECT_FALSE(traces::name_rank_from_file(p, "x.json", "w-([0-9]+)"));
  EXPECT_FALSE(p.rank);
  EXPECT_TRUE(any_says(p.unavailable, "nor does its file name x.json"));
  EXPECT_THROW(traces::rank_from_name("a", "rank(["), Error);
  EXPECT_EQ(traces::rank_from_name("trainer_RANK-12.1.pt.trace.json", traces::kRankFromName), 12);
}

TEST(Traces, BrokenTracesAreErrorsNamingTheFileAndField) {
  TempDir dir;
  const std::string ok = R"("name": "aten::mm", "ts": 1.5, "dur": 2, "pid": 1, "tid": 1)";
  struct Case {
    std::string text, expected;
  };
  std::vector<Case> cases = {
      {R"([{"ph": "X", "name": "aten::mm", "dur": 2, "pid": 1, "tid": 1}])",
       R"(trace event 0 ("aten::mm"): no "ts" field)"},
      {R"([{"ph": "X", )" + ok +
           R"(}, {"ph": "X", "name": "b", "ts": "soon", "dur": 1, "pid": 1, "tid": 1}])",
       R"(trace event 1 ("b"): field "ts" is not a number: "soon")"},
      {R"([{"ph": "X", "name": "b", "ts": 1, "dur": -4, "pid": 1, "tid": 1}])",
       R"(field "dur" is negative)"},
      {R"([{"ph": "X", "name": "b", "ts": 1e300, "dur": 4, "pid": 1, "tid": 1}])",
       R"(field "ts" is out of range)"},
      {R"([{"ph": "X", "name": "b", "ts": 1, "dur": 4, "pid": 1, "tid": {}}])",
       R"(field "tid" is neither a number nor a string)"},
      {R"([{"ph": 7, "name": "b"}])", R"(field "ph" is not a string)"},
      {R"([{"name": "b"}])", R"(no "ph" field)"},
      {R"([{"ph": "X", "name": 3, "ts": 1, "dur": 4, "pid": 1, "tid": 1}])",
       R"(field "name" is not a string)"},
      {R"([17])", "trace event 0 is not an object"},
      {R"({"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", )" + ok +
           R"(, "args": {"grid": "wide"}}]})",
       R"(field "args.grid" is not three whole numbers)"},
      {R"({"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", )" + ok +
           R"(, "args": {"stream": 1.5}}]})",
       R"(field "args.stream" is not a whole number)"},
      {R"({"schemaVersion": 1, "distributedInfo": {"rank": "one"}, "traceEvents": []})",
       R"(field "distributedInfo.rank" is not a whole number: "one")"},
      {R"({"schemaVersion": 1, "distributedInfo": [], "traceEvents": []})",
       R"(field "distributedInfo" is not an object)"},
      {R"({"schemaVersion": 1, "deviceProperties": []})", R"(without a "traceEvents" field)"},
      {R"({"schemaVersion": 1, "traceEvents": [{"ph": "X", )" + ok, "cut short"},
      {R"([{"ph": "X", , }])", "not valid JSON at byte"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto file = dir.write("t" + std::to_string(i) + ".pt.trace.json", cases[i].text);
    auto what = load_error(file);
    EXPECT_EQ(what.rfind(file.string() + ": ", 0), 0u) << what;
    EXPECT_NE(what.find(cases[i].expected), std::string::npos)
        << "case " << i << ": " << what << "\n expected: " << cases[i].expected;
    // The same bytes gzipped say the same.
    auto gz = dir.write("t" + std::to_string(i) + ".pt.trace.json.gz", core::gzip(cases[i].text));
    auto gz_what = load_error(gz);
    EXPECT_NE(gz_what.find(cases[i].expected), std::string::npos)
        << "case " << i << ": " << gz_what;
  }
  // A gzipped trace cut short, and gzip's header alone.
  auto whole = core::gzip(R"({"schemaVersion": 1, "traceEvents": [{"ph": "X", )" + ok + "}]}");
  auto cut = dir.write("cut.json.gz", whole.substr(0, whole.size() - 12));
  EXPECT_NE(load_error(cut).find("cut short"), std::string::npos) << load_error(cut);
  auto header = dir.write("header.json.gz", whole.substr(0, 10));
  EXPECT_NE(load_error(header).find("gzip data is empty or damaged"), std::string::npos)
      << load_error(header);
  // Events of kinds it does not read are passed over; begin/end pairs are said.
  auto be = dir.write("be.json", R"([{"ph": "B", "name": "x", "ts": 1, "pid": 1, "tid": 1},
      {"ph": "E", "ts": 2, "pid": 1, "tid": 1}, {"ph": "X", )" +
                                     ok + "}]");
  auto p = Profile::load(be);
  EXPECT_EQ(*p.source, "Chrome trace events");
  EXPECT_EQ(p.spans.size(), 1u);
  EXPECT_TRUE(any_says(p.unavailable, "2 begin/end events"));
}

TEST(Traces, GzippedProfileLoadsAsThePlainOne) {
  TempDir dir;
  auto legacy = Profile::load(kLegacy);
  auto plain = dir.path() / "p.json";
  legacy.save(plain);
  std::ifstream in(plain, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto gz = dir.write("p.json.gz", core::gzip(text));
  auto a = Profile::load(plain);
  auto b = Profile::load(gz);
  EXPECT_EQ(a, b);
  EXPECT_EQ(*b.source, "torch.profiler (without Kineto)");  // saved with it, read back
  EXPECT_EQ(b.rank->rank, 3);
}
