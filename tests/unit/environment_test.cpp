#include <gtest/gtest.h>

#include "core/text.hpp"
#include "host/probes.hpp"
#include "test_util.hpp"

using namespace mainboard;

TEST(Job, EachSchedulersVariables) {
  auto slurm = host::detect_job(
      {{"SLURM_JOB_ID", "77"}, {"SLURM_JOB_NAME", "train"}, {"SLURM_ARRAY_TASK_ID", "3"}});
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->scheduler, "slurm");
  EXPECT_EQ(slurm->id, "77");
  EXPECT_EQ(slurm->name, "train");
  EXPECT_EQ(slurm->array_task, "3");
  EXPECT_EQ(host::detect_job({{"PBS_JOBID", "12.pbs01"}})->scheduler, "pbs");
  EXPECT_EQ(host::detect_job({{"LSB_JOBID", "5"}})->scheduler, "lsf");
  EXPECT_EQ(host::detect_job({{"FLUX_JOB_ID", "f2Xk"}})->id, "f2Xk");
  EXPECT_EQ(host::detect_job({{"JOB_ID", "9"}, {"SGE_ROOT", "/opt/sge"}})->scheduler, "sge");
  // JOB_ID alone is too common a name to mean Grid Engine.
  EXPECT_FALSE(host::detect_job({{"JOB_ID", "9"}}));
  EXPECT_FALSE(host::detect_job({{"SLURM_JOB_ID", ""}}));
  EXPECT_FALSE(host::detect_job({}));
}

TEST(Job, HtcondorIdComesFromTheJobAd) {
  TempDir root;
  root.write("execute/dir_1/.job.ad", "ClusterId = 1234\nProcId = 5\nOwner = \"ada\"\n");
  core::Fs fs(root.path());
  auto job = host::detect_job({{"_CONDOR_JOB_AD", "/execute/dir_1/.job.ad"}}, &fs);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->scheduler, "htcondor");
  EXPECT_EQ(job->id, "1234.5");
}

TEST(Schedulers, FoundOnPathInTableOrder) {
  ReplayRunner runner(
      {{"bsub", "/opt/lsf/bin/bsub"}, {"srun", "/usr/bin/srun"}, {"flux", "/usr/bin/flux"}}, {});
  auto found = host::detect_schedulers(runner);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].name, "slurm");
  EXPECT_EQ(found[0].binary, "/usr/bin/srun");
  EXPECT_EQ(found[1].name, "lsf");
  EXPECT_EQ(found[2].name, "flux");
}

// The live identity is this process's, named as `id` names it (files first, then NSS).
TEST(Environment, LiveIdentityIsWhatIdSays) {
  host::Note note;
  auto env = host::probe_environment(core::Fs("/"), {}, ReplayRunner({}, {}), note);
  ASSERT_FALSE(env.groups.empty());
  EXPECT_EQ(env.groups.front(), env.group);
  EXPECT_FALSE(env.scheduler);
  auto id = [](const char* flag) {
    auto r = LocalRunner("/usr/bin:/bin").run(Command{{"id", flag}, std::chrono::seconds(10)});
    EXPECT_TRUE(r.ok()) << r.err;
    return std::string(core::trim(r.out));
  };
  EXPECT_EQ(env.user, id("-un"));
  EXPECT_EQ(env.group, id("-gn"));
  std::string groups;
  for (const auto& g : env.groups)
    groups += (groups.empty() ? "" : " ") + g;
  EXPECT_EQ(groups, id("-Gn"));
}

TEST(Environment, RecordedIdentityFromPasswdAndGroup) {
  TempDir root;
  root.write("proc/self/status", "Name:\tx\nUid:\t1000\t1001\t1001\t1001\n");
  root.write("etc/passwd", "root:x:0:0::/root:/bin/sh\nbob:x:1001:500::/home/bob:/bin/sh\n");
  root.write("etc/group", "staff:x:500:\nvideo:x:44:ada,bob\naudio:x:45:bob\nother:x:46:alice\n");
  host::Note note;
  auto env = host::probe_environment(core::Fs(root.path()), {}, ReplayRunner({}, {}), note);
  EXPECT_EQ(env.user, "bob");  // the effective uid, second field of Uid:
  EXPECT_EQ(env.group, "staff");
  EXPECT_EQ(env.groups, (std::vector<std::string>{"staff", "video", "audio"}));
}

TEST(Environment, RecordedIdentityMissing) {
  TempDir root;
  root.write("proc/self/status", "Uid:\n");
  host::Note note;
  auto env = host::probe_environment(core::Fs(root.path()), {}, ReplayRunner({}, {}), note);
  EXPECT_EQ(env.user, "");
  EXPECT_EQ(note.status, ProbeStatus::unsupported);
}
