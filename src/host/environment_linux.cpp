#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "core/paths.hpp"
#include "core/text.hpp"
#include "host/probes.hpp"

namespace mainboard::host {

namespace {

/// One row per scheduler: the client commands that reveal it on PATH, and the variables it sets
/// inside a job. Order matters only for which one `scheduler` reports when several are present.
struct SchedulerRow {
  const char* name;
  std::array<const char*, 3> binaries;
  const char* job_id_var;
  const char* job_name_var;
  const char* array_var;
};

constexpr SchedulerRow kSchedulers[] = {
    {"slurm",
     {"sbatch", "srun", "squeue"},
     "SLURM_JOB_ID",
     "SLURM_JOB_NAME",
     "SLURM_ARRAY_TASK_ID"},
    // PBS Pro, OpenPBS and Torque share qsub; pbsnodes is theirs alone (SGE has no such command).
    {"pbs", {"pbsnodes", "qmgr", nullptr}, "PBS_JOBID", "PBS_JOBNAME", "PBS_ARRAY_INDEX"},
    {"lsf", {"bsub", "bjobs", nullptr}, "LSB_JOBID", "LSB_JOBNAME", "LSB_JOBINDEX"},
    {"sge", {"qconf", "qhost", nullptr}, "JOB_ID", "JOB_NAME", "SGE_TASK_ID"},
    {"htcondor", {"condor_submit", "condor_q", nullptr}, "_CONDOR_JOB_AD", nullptr, nullptr},
    {"flux", {"flux", nullptr, nullptr}, "FLUX_JOB_ID", nullptr, nullptr},
};

struct Identity {
  std::string user;
  std::string group;
  std::vector<std::string> groups;
};

std::string group_name(gid_t gid) {
  std::vector<char> buf(16384);
  group g{};
  group* out = nullptr;
  while (::getgrgid_r(gid, &g, buf.data(), buf.size(), &out) == ERANGE && buf.size() < (1u << 22))
    buf.resize(buf.size() * 2);
  return out ? std::string(out->gr_name) : std::to_string(gid);
}

/// The fields of the /etc/passwd or /etc/group line ("NAME:x:ID:…") whose id is `id` and that
/// has at least `fields` of them; empty when none has.
std::vector<std::string_view> entry_with_id(const std::optional<std::string>& text,
                                            const std::string& id, std::size_t fields) {
  if (text)
    for (auto line : core::split_lines(*text)) {
      auto f = core::split(line, ':');
      if (f.size() >= fields && f[2] == id) return f;
    }
  return {};
}

/// The name /etc/passwd or /etc/group gives `id`, when it lists it.
std::optional<std::string> listed_name(const std::optional<std::string>& text, unsigned id) {
  auto f = entry_with_id(text, std::to_string(id), 3);
  if (f.empty() || f[0].empty()) return std::nullopt;
  return std::string(f[0]);
}

/// The live identity: this process's user and groups (geteuid, getegid, getgroups: what it may
/// open, as `id` shows it). Names come from /etc/passwd and /etc/group where they list the ids,
/// else from NSS, so that LDAP and SSSD users and groups resolve too: NSS loads its modules and
/// may ask daemons (1.3 ms with systemd's on every snapshot), so it is asked only for what the
/// files leave out.
Identity live_identity(const core::Fs& fs) {
  Identity id;
  const auto passwd_text = fs.read(core::paths::kEtcPasswd);
  const auto group_text = fs.read(core::paths::kEtcGroup);
  uid_t uid = ::geteuid();
  if (auto listed = listed_name(passwd_text, uid)) {
    id.user = *listed;
  } else {
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* out = nullptr;
    while (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &out) == ERANGE &&
           buf.size() < (1u << 22))
      buf.resize(buf.size() * 2);
    id.user = out ? std::string(out->pw_name) : std::to_string(uid);
  }
  auto name_of = [&](gid_t gid) {
    auto listed = listed_name(group_text, gid);
    return listed ? *listed : group_name(gid);
  };
  const gid_t primary = ::getegid();
  id.group = name_of(primary);
  id.groups.push_back(id.group);
  int n = ::getgroups(0, nullptr);
  std::vector<gid_t> gids(static_cast<std::size_t>(std::max(n, 0)));
  n = n > 0 ? ::getgroups(n, gids.data()) : 0;
  std::vector<gid_t> seen{primary};
  for (int i = 0; i < n; ++i) {
    gid_t gid = gids[static_cast<std::size_t>(i)];
    if (std::find(seen.begin(), seen.end(), gid) != seen.end()) continue;
    seen.push_back(gid);
    id.groups.push_back(name_of(gid));
  }
  return id;
}

/// A recorded host's identity: the effective uid from its /proc/self/status, names from its
/// /etc/passwd and /etc/group.
/// A host without /proc (a Mac): the login name from the environment, groups from `id`.
Identity identity_from_commands(const core::EnvMap& env, const Runner& runner) {
  Identity id;
  id.user = core::env_value(env, "USER").value_or(core::env_value(env, "LOGNAME").value_or(""));
  auto exe = runner.find_executable("id");
  if (!exe) return id;
  auto group = runner.run(Command{{*exe, "-gn"}, std::chrono::milliseconds(2000)});
  auto groups = runner.run(Command{{*exe, "-Gn"}, std::chrono::milliseconds(2000)});
  if (group.ok()) id.group = std::string(core::trim(group.out));
  if (!id.group.empty()) id.groups.push_back(id.group);
  if (groups.ok())
    for (auto g : core::split_ws(core::trim(groups.out)))
      if (g != id.group) id.groups.emplace_back(g);
  return id;
}

Identity recorded_identity(const core::Fs& fs, Note& note) {
  Identity id;
  auto status = fs.read(core::paths::kProcSelfStatus);
  std::optional<std::uint64_t> uid;
  if (status)
    if (auto v = core::find_value(*status, "Uid")) {
      auto parts = core::split_ws(*v);
      if (parts.size() >= 2) uid = core::parse_u64(parts[1]);
    }
  if (!uid) {
    note.unsupported("no Uid in /proc/self/status");
    return id;
  }
  std::string uid_text = std::to_string(*uid);
  std::string gid_text;
  const auto passwd_text = fs.read(core::paths::kEtcPasswd);
  if (auto f = entry_with_id(passwd_text, uid_text, 4); !f.empty()) {
    id.user = std::string(f[0]);
    gid_text = std::string(f[3]);
  }
  if (id.user.empty()) id.user = uid_text;
  if (auto groups = fs.read(core::paths::kEtcGroup)) {
    std::vector<std::string> others;
    for (auto line : core::split_lines(*groups)) {
      auto f = core::split(line, ':');
      if (f.size() < 4) continue;
      if (f[2] == gid_text) {
        id.group = std::string(f[0]);
        continue;
      }
      for (auto member : core::split(f[3], ','))
        if (core::trim(member) == id.user) others.emplace_back(f[0]);
    }
    if (id.group.empty()) id.group = gid_text;
    id.groups.push_back(id.group);
    id.groups.insert(id.groups.end(), others.begin(), others.end());
  }
  return id;
}

/// HTCondor exports the path of the job's ClassAd file; its ClusterId.ProcId names the job.
std::string condor_job_id(const core::Fs* fs, const std::string& ad_path) {
  if (!fs) return {};
  auto text = fs->read(ad_path, 1u << 20);
  if (!text) return {};
  auto cluster = core::find_value(*text, "ClusterId", '=');
  auto proc = core::find_value(*text, "ProcId", '=');
  if (!cluster) return {};
  return std::string(*cluster) + (proc ? "." + std::string(*proc) : "");
}

}  // namespace

std::optional<Job> detect_job(const core::EnvMap& env, const core::Fs* fs) {
  for (const auto& row : kSchedulers) {
    auto id = core::env_value(env, row.job_id_var);
    if (!id) continue;
    // JOB_ID is too generic a name to trust alone: SGE also sets SGE_ROOT/SGE_O_HOST in jobs.
    if (std::string_view(row.name) == "sge" && !core::env_value(env, "SGE_ROOT") &&
        !core::env_value(env, "SGE_O_HOST"))
      continue;
    Job job;
    job.scheduler = row.name;
    job.id = std::string_view(row.name) == "htcondor" ? condor_job_id(fs, *id) : *id;
    if (job.id.empty()) job.id = *id;
    if (row.job_name_var)
      if (auto name = core::env_value(env, row.job_name_var)) job.name = *name;
    if (row.array_var) job.array_task = core::env_value(env, row.array_var);
    return job;
  }
  return std::nullopt;
}

std::vector<Scheduler> detect_schedulers(const Runner& runner) {
  std::vector<Scheduler> found;
  for (const auto& row : kSchedulers) {
    for (const char* bin : row.binaries) {
      if (!bin) continue;
      if (auto path = runner.find_executable(bin)) {
        found.push_back({row.name, *path});
        break;
      }
    }
  }
  return found;
}

Environment probe_environment(const core::Fs& fs, const core::EnvMap& env, const Runner& runner,
                              Note& note) {
  Environment e;
  Identity id = fs.is_live()         ? live_identity(fs)
                : fs.exists("/proc") ? recorded_identity(fs, note)
                                     : identity_from_commands(env, runner);
  e.user = std::move(id.user);
  e.group = std::move(id.group);
  e.groups = std::move(id.groups);
  e.schedulers = detect_schedulers(runner);
  if (!e.schedulers.empty()) e.scheduler = e.schedulers.front();
  e.job = detect_job(env, &fs);
  return e;
}

}  // namespace mainboard::host
