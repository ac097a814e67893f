// The ranks of a distributed job: which rank a process is, its clock against the wall clock, the
// merge of the ranks' profiles onto one axis, and the straggler read from them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/clock.hpp"
#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/version.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

constexpr std::int64_t kMs = 1'000'000;

struct Phase {
  const char* name;
  std::int64_t ms;
};

/// One rank's profile: `steps` steps on one thread (tid `tid`), each made of `phases` one
/// after another, from `start` on its monotonic clock.
Profile rank_profile(std::int64_t rank, std::int64_t world, const std::vector<Phase>& phases,
                     int steps, std::int64_t start = 1'000 * kMs, std::int64_t tid = 100,
                     const std::string& boot = "boot-a") {
  Profile p;
  p.pid = 1000 + rank;
  p.command = "python3";
  p.node = "n" + std::to_string(rank + 1);
  p.rank = RankInfo{rank, 0, world, "77", "RANK"};
  p.written_by = kVersion;
  p.clock = ClockReference{start, 1'700'000'000'000 * kMs + start, 500, boot};
  p.threads = {{0, tid, "MainThread"}};
  p.paths = {"step"};
  p.span_stats = {{"step", "step", 0, 0, 0, 0, 0}};
  for (const auto& ph : phases) {
    p.paths.push_back(std::string("step/") + ph.name);
    p.span_stats.push_back({p.paths.back(), ph.name, 0, 0, 0, 0, 0});
  }
  auto add = [&](std::uint32_t path, std::int64_t b, std::int64_t e) {
    p.spans.push_back({path, 0, b, e});
    auto& s = p.span_stats[path];
    s.min_ns = s.calls ? std::min(s.min_ns, e - b) : e - b;
    s.max_ns = std::max(s.max_ns, e - b);
    ++s.calls;
    s.total_ns += e - b;
    s.self_ns += e - b;
  };
  std::int64_t t = start;
  for (int k = 0; k < steps; ++k) {
    auto step_start = t;
    for (std::size_t i = 0; i < phases.size(); ++i) {
      add(static_cast<std::uint32_t>(i + 1), t, t + phases[i].ms * kMs);
      t += phases[i].ms * kMs;
    }
    add(0, step_start, t);
    p.span_stats[0].self_ns -= t - step_start;
  }
  std::stable_sort(p.spans.begin(), p.spans.end(),
                   [](const SpanEvent& a, const SpanEvent& b) { return a.start_ns < b.start_ns; });
  p.start_ns = start;
  p.end_ns = t;
  return p;
}

/// Data-parallel training in which rank `slow` loads its data `delay` ms longer and the others
/// wait for it at the end of their backward pass (where the gradients' all-reduce is).
std::vector<Profile> ddp_job(int world, int slow, std::int64_t delay, int steps = 10) {
  std::vector<Profile> ranks;
  for (int r = 0; r < world; ++r) {
    bool s = r == slow;
    ranks.push_back(rank_profile(r, world,
                                 {{"data", 10 + (s ? delay : 0)},
                                  {"forward", 20},
                                  {"backward", 30 + (s ? 0 : delay)},
                                  {"optimizer", 5}},
                                 steps));
  }
  return ranks;
}

bool has_line(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

}  // namespace

TEST(Ranks, TheNearestLauncherNamesTheRank) {
  auto torchrun = RankInfo::from_environment(
      {"RANK=2", "LOCAL_RANK=0", "WORLD_SIZE=3", "TORCHELASTIC_RUN_ID=abc", "PATH=/bin"});
  ASSERT_TRUE(torchrun);
  EXPECT_EQ(torchrun->rank, 2);
  EXPECT_EQ(torchrun->local_rank, 0);
  EXPECT_EQ(torchrun->world_size, 3);
  EXPECT_EQ(torchrun->job_id, "abc");
  EXPECT_EQ(torchrun->source, "RANK");
  // torchrun under srun: its worker's rank, Slurm's job.
  auto both = RankInfo::from_environment(
      {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_ID=77", "RANK=5", "WORLD_SIZE=8"});
  ASSERT_TRUE(both);
  EXPECT_EQ(both->rank, 5);
  EXPECT_EQ(both->world_size, 8);
  EXPECT_EQ(both->job_id, "77");
  auto slurm = RankInfo::from_environment(
      {"SLURM_PROCID=5", "SLURM_LOCALID=1", "SLURM_NTASKS=8", "SLURM_JOB_ID=77"});
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->rank, 5);
  EXPECT_EQ(slurm->local_rank, 1);
  EXPECT_EQ(slurm->world_size, 8);
  EXPECT_EQ(slurm->source, "SLURM_PROCID");
  auto mpi = RankInfo::from_environment({"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_LOCAL_RANK=1",
                                         "OMPI_COMM_WORLD_SIZE=4", "SLURM_PROCID=0"});
  ASSERT_TRUE(mpi);
  EXPECT_EQ(mpi->rank, 3);
  EXPECT_EQ(mpi->world_size, 4);
  EXPECT_EQ(mpi->source, "OMPI_COMM_WORLD_RANK");
  auto pmi = RankInfo::from_environment({"PMI_RANK=1", "PMI_SIZE=2"});
  ASSERT_TRUE(pmi);
  EXPECT_EQ(pmi->rank, 1);
  EXPECT_EQ(pmi->world_size, 2);
}

TEST(Ranks, AnotherProcessIsReadFromItsOwnEnvironment) {
  ::setenv("RANK", "6", 1);
  ::setenv("WORLD_SIZE", "8", 1);
  auto self = RankInfo::of_process(::getpid());  // the environment it started with: no RANK
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  EXPECT_FALSE(self.has_value() && self->rank == 6);
  EXPECT_FALSE(RankInfo::of_process(0));  // no such process: nothing, not an error
}

TEST(Ranks, MalformedVariablesNameNoRank) {
  EXPECT_FALSE(RankInfo::from_environment({}));
  EXPECT_FALSE(RankInfo::from_environment({"PATH=/bin", "RANK", "=3"}));
  EXPECT_FALSE(RankInfo::from_environment({"RANK=abc"}));
  EXPECT_FALSE(RankInfo::from_environment({"RANK=-1"}));
  EXPECT_FALSE(RankInfo::from_environment({"RANK=99999999999999999999999"}));
  EXPECT_FALSE(RankInfo::from_environment({"RANK="}));
  // A bad RANK leaves the next launcher's word.
  auto next = RankInfo::from_environment({"RANK=x", "SLURM_PROCID=4"});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->rank, 4);
  // A world size the rank does not fit in is not this rank's.
  auto r = RankInfo::from_environment({"RANK=7", "WORLD_SIZE=4", "LOCAL_RANK=zz"});
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->world_size);
  EXPECT_FALSE(r->local_rank);
}

TEST(Ranks, TheClockReferencePairsTheClocks) {
  auto c = ClockReference::now();
  EXPECT_NEAR(static_cast<double>(c.realtime_ns), static_cast<double>(core::unix_ns()), 1e9);
  EXPECT_NEAR(static_cast<double>(c.monotonic_ns), static_cast<double>(core::monotonic_ns()), 1e9);
  EXPECT_GE(c.uncertainty_ns, 0);
  EXPECT_LT(c.uncertainty_ns, 10 * kMs);
  EXPECT_EQ(c.boot_id.size(), 36u) << c.boot_id;
}

TEST(Ranks, MergeKeepsEachRankAProcessOnOneAxis) {
  auto ranks = ddp_job(3, 2, 50);
  // Ranks 1 and 2 ran on other nodes, whose monotonic clocks started elsewhere: rank 1's reads
  // 400 ms behind the first rank's for the same wall-clock instant.
  ranks[1] = rank_profile(1, 3, {{"data", 10}, {"forward", 20}, {"backward", 80}, {"optimizer", 5}},
                          10, 600 * kMs, 100, "boot-b");
  ranks[1].clock->realtime_ns = ranks[0].clock->realtime_ns;  // both read at the same instant
  ranks[1].clock->monotonic_ns = 600 * kMs;
  auto job = Profile::merge_ranks({ranks[2], ranks[0], ranks[1]}, {"c.json", "a.json", "b.json"});
  ASSERT_EQ(job.processes.size(), 3u);
  EXPECT_EQ(job.processes[0].rank->rank, 0);  // by rank, whatever the order given
  EXPECT_EQ(job.processes[0].alignment, "reference");
  EXPECT_EQ(job.processes[1].alignment, "wall clock");
  EXPECT_EQ(job.processes[1].offset_ns, 400 * kMs);
  EXPECT_EQ(job.processes[1].start_ns, 1'000 * kMs);  // on rank 0's axis
  EXPECT_EQ(job.processes[2].alignment, "boot id");
  EXPECT_EQ(job.processes[2].offset_ns, 0);
  // The same tid on three nodes: three threads, each its rank's.
  ASSERT_EQ(job.threads.size(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i)
    EXPECT_EQ(job.threads[i].process, i);
  // Job totals summed; each rank's own statistics kept.
  auto step = std::find_if(job.span_stats.begin(), job.span_stats.end(),
                           [](const SpanStat& s) { return s.path == "step"; });
  ASSERT_NE(step, job.span_stats.end());
  EXPECT_EQ(step->calls, 30u);
  EXPECT_EQ(job.processes[2].span_stats[1].total_ns, 600 * kMs);  // rank 2's data: 10 × 60 ms
  EXPECT_TRUE(std::is_sorted(
      job.spans.begin(), job.spans.end(),
      [](const SpanEvent& a, const SpanEvent& b) { return a.start_ns < b.start_ns; }));
  EXPECT_EQ(job.start_ns, 1'000 * kMs);
  // Nothing to warn of.
  EXPECT_FALSE(has_line(job.unavailable, "merge:")) << job.unavailable.front();
  // Saved and read back whole.
  TempDir dir;
  job.save(dir.path() / "job.json");
  EXPECT_EQ(Profile::load(dir.path() / "job.json"), job);
}

TEST(Ranks, MergeSaysWhatItCouldNotDo) {
  auto ranks = ddp_job(4, 1, 20);
  ranks.erase(ranks.begin() + 2);  // rank 2 left no profile
  ranks[2].clock.reset();          // rank 3 recorded no clock reference
  ranks[1].written_by = "0.0.9";
  auto dup = ranks[0];
  ranks.push_back(dup);  // rank 0 twice
  auto job = Profile::merge_ranks(ranks, {"r0.json", "r1.json", "r3.json", "again.json"});
  EXPECT_TRUE(has_line(job.unavailable, "merge: 1 of 4 ranks have no profile: rank 2"));
  EXPECT_TRUE(has_line(job.unavailable, "merge: r3.json has no clock reference"));
  EXPECT_TRUE(has_line(job.unavailable, "merge: rank 0 has 2 profiles (r0.json, again.json)"));
  EXPECT_TRUE(has_line(job.unavailable, "r1.json (mainboard 0.0.9)"));
  auto r3 = std::find_if(job.processes.begin(), job.processes.end(),
                         [](const ProcessInfo& p) { return p.rank && p.rank->rank == 3; });
  ASSERT_NE(r3, job.processes.end());
  EXPECT_EQ(r3->alignment, "unaligned");
  EXPECT_EQ(r3->start_ns, job.processes[0].start_ns);
  auto report = job.ranks();
  EXPECT_EQ(report.missing_ranks, std::vector<std::int64_t>{2});
  EXPECT_EQ(report.world_size, 4);
  EXPECT_TRUE(has_line(report.warnings, "have no profile: rank 2"));
  // A profile that is already a job, or nothing at all, is refused.
  EXPECT_THROW(Profile::merge_ranks({job}), Error);
  EXPECT_THROW(Profile::merge_ranks({}), Error);
}

TEST(Ranks, AHugeWorldSizeFromAHostileFileIsCountedNotListed) {
  auto ranks = ddp_job(2, 0, 0);
  ranks[0].rank->world_size = std::int64_t{1} << 40;
  ranks[1].rank->world_size = std::int64_t{1} << 40;
  auto job = Profile::merge_ranks(ranks);
  EXPECT_TRUE(has_line(job.unavailable,
                       "1099511627774 of 1099511627776 ranks have no profile: "
                       "ranks 2, 3, 4, 5, 6, 7, 8, 9 and 1099511627766 more"));
  EXPECT_EQ(job.ranks().missing_ranks.size(), 1000u);
}

TEST(Ranks, TheStragglerIsFoundWhereTheOthersWaitForIt) {
  auto job = Profile::merge_ranks(ddp_job(3, 2, 50));
  auto r = job.ranks();
  ASSERT_TRUE(r.straggler) << r.verdict;
  EXPECT_EQ(r.straggler->rank, 2);
  EXPECT_EQ(r.straggler->node, "n3");
  EXPECT_EQ(r.straggler->phase, "step/data");
  EXPECT_EQ(r.straggler->phase_kind, "data loading");
  EXPECT_EQ(r.straggler->phase_excess_ns, 500 * kMs);  // 10 steps × 50 ms
  EXPECT_EQ(r.straggler->wait_phase, "step/backward");
  EXPECT_EQ(r.straggler->others_wait_ns, 500 * kMs);
  EXPECT_EQ(r.straggler->lag_ns, 500 * kMs);
  EXPECT_EQ(r.straggler->steps, 10u);
  EXPECT_EQ(r.straggler->slowest_steps, 10u);
  EXPECT_EQ(r.step, "step");
  ASSERT_EQ(r.steps.size(), 10u);
  EXPECT_EQ(r.steps[3].slowest_rank, 2);
  EXPECT_EQ(r.steps[3].lag_ns, 50 * kMs);
  EXPECT_EQ(r.ranks[0].waits_for, 2);
  EXPECT_EQ(r.ranks[1].waits_for, 2);
  EXPECT_FALSE(r.ranks[2].waits_for);
  EXPECT_EQ(r.spans.front().path, "step/data");  // the widest spread first
  EXPECT_EQ(r.spans.front().slowest_rank, 2);
  EXPECT_EQ(r.verdict.rfind("rank 2 (n3) holds the job back", 0), 0u) << r.verdict;
  // The report opens with it.
  auto text = job.report();
  EXPECT_EQ(text.rfind("rank 2 (n3) holds the job back", 0), 0u) << text;
  EXPECT_NE(text.find("Ranks (3 of 3 on 3 nodes; step step, 10 on every rank)"), std::string::npos)
      << text;
}

TEST(Ranks, TwoRanksMirroringEachOtherAreReadAsDataParallelTraining) {
  // With two ranks each is the other's median: rank 1's slow data and rank 0's long backward
  // are equally wide. The all-reduce is at the end of the backward pass: rank 1 is the straggler.
  auto r = Profile::merge_ranks(ddp_job(2, 1, 40)).ranks();
  ASSERT_TRUE(r.straggler) << r.verdict;
  EXPECT_EQ(r.straggler->rank, 1);
  EXPECT_EQ(r.straggler->phase, "step/data");
  EXPECT_EQ(r.straggler->wait_phase, "step/backward");
}

TEST(Ranks, NamedCollectivesAreWaits) {
  std::vector<Profile> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.push_back(rank_profile(
        r, 3,
        {{"load", 5}, {"compute", 40 + (r == 0 ? 25 : 0)}, {"exchange", 10 + (r == 0 ? 0 : 25)}},
        6));
  auto job = Profile::merge_ranks(ranks);
  // "exchange" says nothing of waiting until asked; without it the inference still finds rank 0.
  RankOptions o;
  o.collectives = {"exchange"};
  auto r = job.ranks(o);
  ASSERT_TRUE(r.straggler) << r.verdict;
  EXPECT_EQ(r.straggler->rank, 0);
  EXPECT_EQ(r.straggler->phase, "step/compute");
  EXPECT_EQ(r.straggler->phase_kind, "");
  EXPECT_EQ(r.straggler->wait_phase, "step/exchange");
  EXPECT_EQ(r.straggler->others_wait_ns, 6 * 25 * kMs);
  auto exchange = std::find_if(r.spans.begin(), r.spans.end(),
                               [](const RankSpread& s) { return s.path == "step/exchange"; });
  ASSERT_NE(exchange, r.spans.end());
  EXPECT_TRUE(exchange->wait);
  // A span named like a collective needs no asking.
  std::vector<Profile> named;
  for (int r2 = 0; r2 < 3; ++r2)
    named.push_back(rank_profile(
        r2, 3, {{"compute", 40 + (r2 == 1 ? 30 : 0)}, {"allreduce", 10 + (r2 == 1 ? 0 : 30)}}, 4));
  auto n = Profile::merge_ranks(named).ranks();
  ASSERT_TRUE(n.straggler);
  EXPECT_EQ(n.straggler->rank, 1);
  EXPECT_EQ(n.straggler->wait_phase, "step/allreduce");
}

TEST(Ranks, BalancedRanksNameNoStraggler) {
  std::vector<Profile> ranks;
  for (int r = 0; r < 4; ++r)
    ranks.push_back(
        rank_profile(r, 4, {{"data", 10}, {"forward", 20 + r % 2}, {"backward", 30}}, 5));
  auto r = Profile::merge_ranks(ranks).ranks();
  EXPECT_FALSE(r.straggler);
  EXPECT_EQ(r.verdict.rfind("no rank holds the job back", 0), 0u) << r.verdict;
  // Without spans there is nothing to compare by, and it says how to give some.
  auto bare = ranks;
  for (auto& p : bare) {
    p.spans.clear();
    p.paths.clear();
    p.span_stats.clear();
  }
  auto none = Profile::merge_ranks(bare).ranks();
  EXPECT_NE(none.verdict.find("span()"), std::string::npos) << none.verdict;
  // One process is no job.
  EXPECT_TRUE(ranks[0].ranks().ranks.empty());
  EXPECT_EQ(ranks[0].report().find("holds the job back"), std::string::npos);
}

TEST(Ranks, SamplesInCollectiveCodeAreCountedPerRank) {
  auto ranks = ddp_job(2, 1, 10);
  for (auto& p : ranks) {
    p.frames = {{"main", "python3", "", 0, false},
                {"gloo::transport::tcp::UnboundBuffer::waitRecv", "libtorch_cpu.so", "", 0, false},
                {"sgemm_", "libblas.so.3", "", 0, false}};
    p.stacks = {{1, 0}, {2, 0}};
    p.sample_hz = 100;
  }
  ranks[0].samples = {{1'000 * kMs, 0, 0}, {1'010 * kMs, 0, 0}, {1'020 * kMs, 0, 1}};
  ranks[1].samples = {{1'000 * kMs, 0, 1}};
  auto job = Profile::merge_ranks(ranks);
  EXPECT_EQ(job.frames.size(), 3u);  // one program: its frames once
  auto r = job.ranks();
  EXPECT_EQ(r.ranks[0].collective_samples, 2u);
  EXPECT_EQ(r.ranks[0].samples, 3u);
  EXPECT_EQ(r.ranks[1].collective_samples, 0u);
}

TEST(Ranks, ExportsDrawARankPerProcess) {
  auto job = Profile::merge_ranks(ddp_job(3, 0, 5, 2));
  auto trace = nlohmann::json::parse(job.perfetto_json());
  std::map<std::int64_t, std::string> names;
  std::set<std::int64_t> span_pids;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") names[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "X" && e["cat"] == "span") span_pids.insert(e["pid"].get<std::int64_t>());
  }
  EXPECT_EQ(names[1], "rank 0 (n1, pid 1000)");
  EXPECT_EQ(names[3], "rank 2 (n3, pid 1002)");
  EXPECT_EQ(span_pids, (std::set<std::int64_t>{1, 2, 3}));
  job.frames = {{"f", "m", "", 0, false}};
  job.stacks = {{0}};
  job.samples = {{1'000 * kMs, 2, 0}};
  job.sample_hz = 100;
  EXPECT_NE(job.folded(true).find("rank 2 MainThread-100;f 1"), std::string::npos)
      << job.folded(true);
}

TEST(Ranks, ClocksAndTimesAtTheEndsOfTheRangeDoNotOverflow) {
  auto ranks = ddp_job(3, 1, 10, 2);
  ranks[1].clock = ClockReference{INT64_MIN, INT64_MAX, 0, "other"};
  ranks[2].clock->boot_id = "third";  // another node whose clock reads 1 µs behind
  ranks[2].clock->monotonic_ns -= 1000;
  ranks[2].spans.push_back({0, 0, INT64_MAX - 10, INT64_MAX - 5});
  auto job = Profile::merge_ranks(ranks);
  EXPECT_EQ(job.processes[1].alignment, "unaligned");
  EXPECT_TRUE(has_line(job.unavailable, "too far from the first rank's to be true"));
  EXPECT_EQ(job.processes[2].alignment, "wall clock");
  EXPECT_EQ(job.spans.back().end_ns, INT64_MAX);  // held at the end, not wrapped
}

TEST(Ranks, AFileThatListsAPathTwiceIsReadNotTrusted) {
  auto job = Profile::merge_ranks(ddp_job(2, 1, 30, 3));
  job.processes[0].span_stats.push_back(job.processes[0].span_stats[0]);   // "step" twice
  job.processes[1].span_stats.erase(job.processes[1].span_stats.begin());  // and none here
  auto r = job.ranks();
  EXPECT_EQ(r.step, "");  // not repeated on every rank
  EXPECT_FALSE(r.verdict.empty());
}

TEST(Ranks, AVersionSixProfileLoadsAsOneProcess) {
  auto p = rank_profile(0, 1, {{"a", 1}}, 2);
  nlohmann::json j = p;
  j["schema_version"] = 6;
  for (const char* key : {"node", "rank", "clock", "written_by", "processes"})
    j.erase(key);
  for (auto& t : j["threads"])
    t.erase("process");
  auto back = Profile::parse(j.dump());
  EXPECT_EQ(back.threads[0].process, 0u);
  EXPECT_TRUE(back.processes.empty());
  EXPECT_FALSE(back.rank);
  EXPECT_EQ(back.written_by, "");
  // A thread that names a process the profile does not have is refused.
  nlohmann::json bad = Profile::merge_ranks(ddp_job(2, 0, 1, 1));
  bad["threads"][0]["process"] = 7;
  EXPECT_THROW(Profile::parse(bad.dump()), Error);
}
