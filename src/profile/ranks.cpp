// The ranks of a distributed job: which rank a process is (its launcher's variables), where its
// clock stands against the wall clock, and, over a merged job, which rank holds the others back.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include "core/clock.hpp"
#include "core/text.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/version.hpp"
#include "profile/text_util.hpp"

extern char** environ;

namespace mainboard {

namespace {

using Env = std::unordered_map<std::string_view, std::string_view>;

std::optional<std::int64_t> number(const Env& env, std::string_view name) {
  auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  auto v = core::parse_u64(it->second);
  if (!v || *v > (1ull << 40)) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

std::string text(const Env& env, std::string_view name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : std::string(core::trim(it->second));
}

}  // namespace

std::optional<RankInfo> RankInfo::from_environment(const std::vector<std::string>& environment) {
  Env env;
  for (const auto& kv : environment) {
    auto eq = kv.find('=');
    if (eq != std::string::npos)
      env.emplace(std::string_view(kv).substr(0, eq), std::string_view(kv).substr(eq + 1));
  }
  // The launcher nearest the process first: torchrun (and accelerate, DeepSpeed) under srun or
  // mpirun sets RANK per worker; an MPI launcher under Slurm sets its own rank; Slurm's task id
  // is the last word.
  struct Launcher {
    const char* rank;
    const char* local;
    const char* size;
  };
  static constexpr Launcher kLaunchers[] = {
      {"RANK", "LOCAL_RANK", "WORLD_SIZE"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMIX_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
      {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
      {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
  };
  for (const auto& l : kLaunchers) {
    auto rank = number(env, l.rank);
    if (!rank) continue;
    RankInfo r;
    r.rank = *rank;
    r.local_rank = number(env, l.local);
    r.world_size = number(env, l.size);
    if (!r.world_size && std::string_view(l.rank) == "SLURM_PROCID")
      r.world_size = number(env, "SLURM_NPROCS");
    if (r.world_size && *r.world_size <= r.rank) r.world_size.reset();  // not this rank's job
    r.source = l.rank;
    r.job_id = text(env, "SLURM_JOB_ID");
    if (r.job_id.empty()) r.job_id = text(env, "TORCHELASTIC_RUN_ID");
    if (r.job_id.empty()) r.job_id = text(env, "OMPI_MCA_orte_ess_jobid");
    if (r.job_id.empty()) r.job_id = text(env, "PMIX_NAMESPACE");
    return r;
  }
  return std::nullopt;
}

std::optional<RankInfo> RankInfo::current() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    env.emplace_back(*e);
  return from_environment(env);
}

std::optional<RankInfo> RankInfo::of_process(std::int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::vector<std::string> env;
  for (std::string kv; std::getline(in, kv, '\0');)
    env.push_back(std::move(kv));
  return from_environment(env);
}

ClockReference ClockReference::now() {
  ClockReference best;
  std::int64_t best_gap = -1;
  for (int i = 0; i < 5; ++i) {
    auto before = core::monotonic_ns();
    auto wall = core::unix_ns();
    auto after = core::monotonic_ns();
    auto gap = after - before;
    if (best_gap < 0 || gap < best_gap) {
      best_gap = gap;
      best.monotonic_ns = before + gap / 2;
      best.realtime_ns = wall;
      best.uncertainty_ns = (gap + 1) / 2;
    }
  }
  std::ifstream id("/proc/sys/kernel/random/boot_id");
  std::string line;
  if (std::getline(id, line)) best.boot_id = std::string(core::trim(line));
  return best;
}

std::string this_node() {
  if (const char* slurm = std::getenv("SLURMD_NODENAME"); slurm && *slurm) return slurm;
  char host[256] = {};
  return ::gethostname(host, sizeof host - 1) == 0 ? host : "";
}

void Profile::record_origin() {
  // What a piece of the same run said first stays (the target's own spans, merged in).
  if (node.empty()) node = this_node();
  if (!rank) rank = RankInfo::current();
  clock = ClockReference::now();
  written_by = kVersion;
}

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string last_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool contains_any(const std::string& s, std::initializer_list<const char*> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](const char* w) { return s.find(w) != std::string::npos; });
}

/// Names that are waits in a collective (or for other ranks) by what they say.
bool collective_name(const std::string& name) {
  // PyTorch's tensor operators ("aten::broadcast_tensors") are computation, whatever they say.
  if (core::starts_with(name, "aten::")) return false;
  return contains_any(lower(name),
                      {"allreduce", "all_reduce", "all-reduce", "allgather", "all_gather",
                       "reduce_scatter", "reducescatter", "broadcast", "barrier", "collective",
                       "alltoall", "all_to_all", "sync", "wait", "comm"});
}

/// What part of a training step a span name stands for, by what it says; "" for the user's own.
std::string phase_kind(const std::string& path) {
  auto n = lower(last_name(path));
  if (collective_name(n)) return "collective";
  if (contains_any(n, {"backward", "bwd", "grad"})) return "backward";
  if (contains_any(n, {"forward", "fwd", "predict", "infer"})) return "forward";
  if (contains_any(n, {"optim", "update", "zero_grad"})) return "optimizer";
  if (contains_any(n, {"data", "load", "batch", "input", "fetch", "read", "prefetch"}))
    return "data loading";
  return "";
}

/// How likely a phase holds the others' wait when that is inferred: the all-reduce of
/// data-parallel training runs at the end of the backward pass.
int wait_prior(const std::string& kind) {
  if (kind == "collective") return 4;
  if (kind == "backward") return 3;
  if (kind == "optimizer") return 2;
  if (kind.empty()) return 1;
  return 0;
}

/// Whether a sampled frame is a collective library's code.
bool collective_frame(const StackFrame& f) {
  auto m = lower(f.module);
  if (contains_any(m, {"gloo", "nccl", "rccl", "libmpi", "oneccl", "libucc", "libfabric"}))
    return true;
  const auto& fn = f.function;
  return core::starts_with(fn, "gloo::") || core::starts_with(fn, "c10d::") ||
         core::starts_with(fn, "nccl") || core::starts_with(fn, "MPI_") ||
         core::starts_with(fn, "PMPI_") || core::starts_with(fn, "ompi_coll") ||
         core::starts_with(fn, "ucc_");
}

std::int64_t median_of(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto n = v.size();
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/// The median of `sorted` with one occurrence of `value` left out (the others' median).
std::int64_t median_without(const std::vector<std::int64_t>& sorted, std::int64_t value) {
  auto n = sorted.size();
  if (n < 2) return 0;
  auto skip = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), value) -
                                       sorted.begin());
  auto at = [&](std::size_t i) { return sorted[i < skip ? i : i + 1]; };
  auto m = n - 1;
  return m % 2 ? at(m / 2) : at(m / 2 - 1) + (at(m / 2) - at(m / 2 - 1)) / 2;
}

std::string ms(std::int64_t ns) {
  return detail::duration(ns);
}

}  // namespace

RankReport Profile::ranks(const RankOptions& o) const {
  RankReport out;
  if (processes.empty()) return out;
  for (const auto& u : unavailable)
    if (core::starts_with(u, "merge: ")) out.warnings.push_back(u.substr(7));

  const auto n = processes.size();
  std::map<std::int64_t, std::size_t> sizes;
  for (const auto& p : processes) {
    RankSummary r;
    r.rank = p.rank ? p.rank->rank : static_cast<std::int64_t>(p.index);
    r.node = p.node;
    r.pid = p.pid;
    r.samples = p.samples;
    r.alignment = p.alignment;
    out.ranks.push_back(r);
    if (p.breakdown) {
      out.breakdown.push_back(*p.breakdown);
      out.breakdown.back().rank = r.rank;
    }
    if (p.rank && p.rank->world_size) ++sizes[*p.rank->world_size];
  }
  if (!sizes.empty()) {
    out.world_size = std::max_element(sizes.begin(), sizes.end(), [](auto& a, auto& b) {
                       return a.second < b.second;
                     })->first;
    std::set<std::int64_t> present;
    for (const auto& r : out.ranks)
      present.insert(r.rank);
    for (std::int64_t r = 0; r < *out.world_size && out.missing_ranks.size() < 1000; ++r)
      if (!present.count(r)) out.missing_ranks.push_back(r);
  }

  // Each rank's total per path, exact (its own statistics), and where each path is found.
  std::vector<std::unordered_map<std::string, const SpanStat*>> stat(n);
  std::map<std::string, std::size_t> on_ranks;  // path → ranks that have it
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& s : processes[i].span_stats)
      if (stat[i].emplace(s.path, &s).second) ++on_ranks[s.path];  // a path twice counts once
  auto total = [&](std::size_t i, const std::string& path) -> std::int64_t {
    auto it = stat[i].find(path);
    return it == stat[i].end() ? 0 : it->second->total_ns;
  };
  auto has_children = [&](const std::string& path) {
    auto it = on_ranks.upper_bound(path + "/");
    return it != on_ranks.end() && core::starts_with(it->first, path + "/");
  };

  // The step: asked for, or the shallowest path every rank repeats that holds other spans.
  if (!o.step.empty()) {
    for (const auto& [path, count] : on_ranks)
      if (path == o.step || last_name(path) == o.step)
        if (out.step.empty() || detail::path_depth(path) < detail::path_depth(out.step))
          out.step = path;
    if (out.step.empty()) out.warnings.push_back("no span named " + o.step + ": no step analysis");
  } else {
    for (const auto& [path, count] : on_ranks) {
      if (count != n || !has_children(path)) continue;
      bool repeated = std::all_of(stat.begin(), stat.end(),
                                  [&key = path](const auto& m) { return m.at(key)->calls >= 2; });
      if (!repeated) continue;
      if (out.step.empty() || detail::path_depth(path) < detail::path_depth(out.step))
        out.step = path;
    }
    // The PyTorch profiler's step, where its traces were merged: what its user calls a step.
    if (auto it = on_ranks.find("ProfilerStep");
        it != on_ranks.end() && it->second == n && has_children("ProfilerStep"))
      out.step = "ProfilerStep";
  }
  // The phases: the step's children; without a step, the shallowest level with more than one
  // path (a lone "train" is descended into).
  std::vector<std::string> phases;
  if (!out.step.empty()) {
    for (const auto& [path, count] : on_ranks)
      if (core::starts_with(path, out.step + "/") &&
          detail::path_depth(path) == detail::path_depth(out.step) + 1)
        phases.push_back(path);
  } else {
    std::string parent;
    for (;;) {
      std::vector<std::string> level;
      for (const auto& [path, count] : on_ranks)
        if (parent.empty() ? detail::path_depth(path) == 0
                           : core::starts_with(path, parent + "/") &&
                                 detail::path_depth(path) == detail::path_depth(parent) + 1)
          level.push_back(path);
      if (level.size() == 1 && has_children(level[0])) {
        parent = level[0];
        continue;
      }
      phases = level;
      break;
    }
  }

  // Waits: by name, or asked for.
  auto named_wait = [&](const std::string& path) {
    auto name = last_name(path);
    if (collective_name(name)) return true;
    return std::any_of(o.collectives.begin(), o.collectives.end(),
                       [&](const std::string& c) { return c == name || c == path; });
  };
  const auto P = phases.size();
  std::vector<std::vector<std::int64_t>> T(n, std::vector<std::int64_t>(P));
  std::vector<std::vector<std::int64_t>> sorted(P);  // each phase's totals, sorted
  for (std::size_t p = 0; p < P; ++p) {
    for (std::size_t i = 0; i < n; ++i)
      T[i][p] = total(i, phases[p]);
    for (std::size_t i = 0; i < n; ++i)
      sorted[p].push_back(T[i][p]);
    std::sort(sorted[p].begin(), sorted[p].end());
  }
  auto dev = [&](std::size_t i, std::size_t p) {
    return T[i][p] - median_without(sorted[p], T[i][p]);
  };
  std::vector<bool> wait(P);
  bool any_named = false;
  for (std::size_t p = 0; p < P; ++p)
    any_named |= wait[p] = named_wait(phases[p]);

  std::optional<std::size_t> straggler;
  std::optional<std::size_t> inferred_wait;
  if (n >= 2 && P > 0 && !any_named) {
    // No wait is named: in a synchronized job the straggler is slow in one phase and the
    // others wait for it in another, where it is the fastest. The rank with the widest such
    // pair; on a tie (two ranks mirror each other), the one whose fast phase is likelier to hold
    // a collective (backward, in data-parallel training).
    std::int64_t best = 0;
    int best_prior = -1;
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t hi = 0, lo = 0;
      for (std::size_t p = 1; p < P; ++p) {
        if (dev(i, p) > dev(i, hi)) hi = p;
        if (dev(i, p) < dev(i, lo)) lo = p;
      }
      if (hi == lo || dev(i, hi) <= 0 || dev(i, lo) >= 0) continue;
      auto score = dev(i, hi) - dev(i, lo);
      int prior = wait_prior(phase_kind(phases[lo]));
      bool near = best > 0 && score * 10 >= best * 9 && best * 10 >= score * 9;
      if (best == 0 || (near ? prior > best_prior : score > best)) {
        best = score;
        best_prior = prior;
        straggler = i;
        inferred_wait = lo;
      }
    }
    if (inferred_wait) {
      // Every phase in which the straggler is well below the others is waiting too: DDP, for
      // one, also waits in a forward pass (its buckets rebuilt by a broadcast after the first
      // step).
      auto s = *straggler;
      std::int64_t widest = 0;
      for (std::size_t p = 0; p < P; ++p)
        widest = std::max(widest, dev(s, p));
      for (std::size_t p = 0; p < P; ++p)
        if (-dev(s, p) * 20 >= widest && dev(s, p) < 0) wait[p] = true;
    }
  }

  // Work and wait per rank.
  std::vector<std::int64_t> work(n), waited(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t p = 0; p < P; ++p)
      (wait[p] ? waited[i] : work[i]) += T[i][p];
  for (std::size_t i = 0; i < n; ++i) {
    out.ranks[i].work_ns = work[i];
    out.ranks[i].wait_ns = waited[i];
  }
  std::vector<std::int64_t> work_sorted = work;
  std::sort(work_sorted.begin(), work_sorted.end());
  if (n >= 2 && !straggler && P > 0) {
    std::size_t s = 0;
    for (std::size_t i = 1; i < n; ++i) {
      auto lag_i = work[i] - median_without(work_sorted, work[i]);
      auto lag_s = work[s] - median_without(work_sorted, work[s]);
      if (lag_i > lag_s || (lag_i == lag_s && waited[i] < waited[s])) s = i;
    }
    straggler = s;
  }

  // Collective code in the stack samples, per rank.
  if (!samples.empty()) {
    std::vector<signed char> in_collective(stacks.size(), -1);
    for (const auto& x : samples) {
      auto& c = in_collective[x.stack];
      if (c < 0)
        c = std::any_of(stacks[x.stack].begin(), stacks[x.stack].end(),
                        [&](std::uint32_t f) { return collective_frame(frames[f]); });
      auto proc = threads[x.thread].process;
      if (c && proc < n) ++out.ranks[proc].collective_samples;
    }
  }

  // The steps, from the stored spans: each rank's k-th step against the others' k-th.
  std::vector<std::uint64_t> slowest_count(n);
  if (!out.step.empty()) {
    std::uint32_t step_path = UINT32_MAX;
    // Each path's phase: -1 none, 0 work, 1 wait.
    std::vector<signed char> phase_of(paths.size(), -1);
    for (std::size_t i = 0; i < paths.size(); ++i) {
      if (paths[i] == out.step) step_path = static_cast<std::uint32_t>(i);
      for (std::size_t p = 0; p < P; ++p)
        if (paths[i] == phases[p]) phase_of[i] = wait[p] ? 1 : 0;
    }
    struct Step {
      std::int64_t start, end, work;
    };
    std::vector<std::vector<Step>> per(n);
    std::vector<std::vector<const SpanEvent*>> works(n);
    for (const auto& e : spans) {
      auto proc = threads[e.thread].process;
      if (proc >= n) continue;
      if (e.path == step_path)
        per[proc].push_back({e.start_ns, e.end_ns, 0});
      else if (e.path < phase_of.size() && phase_of[e.path] == 0)
        works[proc].push_back(&e);
    }
    for (std::size_t i = 0; i < n; ++i) {
      // A step's work is the time in the phases in it that are not waits (its time outside
      // them is not work: a PyTorch profiler's step waits for gloo's worker threads in none).
      // Spans are by start: a phase belongs to the last step that started before it, on any
      // thread of the rank (the autograd engine's, say).
      std::size_t k = 0;
      for (const auto* w : works[i]) {
        while (k + 1 < per[i].size() && per[i][k + 1].start <= w->start_ns)
          ++k;
        if (k < per[i].size() && w->start_ns >= per[i][k].start && w->start_ns < per[i][k].end)
          per[i][k].work += w->end_ns - w->start_ns;
      }
    }
    std::size_t steps = SIZE_MAX;
    for (const auto& v : per)
      steps = std::min(steps, v.size());
    for (std::size_t k = 0; k < steps && n >= 2; ++k) {
      std::vector<std::int64_t> w(n);
      for (std::size_t i = 0; i < n; ++i)
        w[i] = per[i][k].work;
      auto s = static_cast<std::size_t>(std::max_element(w.begin(), w.end()) - w.begin());
      std::vector<std::int64_t> others;
      for (std::size_t i = 0; i < n; ++i)
        if (i != s) others.push_back(w[i]);
      StepLag lag;
      lag.index = k;
      lag.slowest_rank = out.ranks[s].rank;
      lag.median_work_ns = median_of(others);
      lag.lag_ns = w[s] - lag.median_work_ns;
      out.steps.push_back(lag);
      ++slowest_count[s];
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    out.ranks[i].slowest_steps = slowest_count[i];

  // The spread of each phase.
  for (std::size_t p = 0; p < P; ++p) {
    RankSpread r;
    r.path = phases[p];
    r.wait = wait[p];
    r.total_ns = std::vector<std::int64_t>(n);
    for (std::size_t i = 0; i < n; ++i)
      r.total_ns[i] = T[i][p];
    r.min_ns = sorted[p].front();
    r.max_ns = sorted[p].back();
    r.median_ns = median_of(sorted[p]);
    auto slow = static_cast<std::size_t>(std::max_element(r.total_ns.begin(), r.total_ns.end()) -
                                         r.total_ns.begin());
    r.slowest_rank = out.ranks[slow].rank;
    r.over_median_ns = r.max_ns - r.median_ns;
    out.spans.push_back(std::move(r));
  }
  std::stable_sort(
      out.spans.begin(), out.spans.end(),
      [](const RankSpread& a, const RankSpread& b) { return a.over_median_ns > b.over_median_ns; });

  // The verdict.
  auto who = [&](std::size_t i) {
    return "rank " + std::to_string(out.ranks[i].rank) +
           (out.ranks[i].node.empty() ? "" : " (" + out.ranks[i].node + ")");
  };
  if (n < 2) {
    out.verdict = "one rank: nothing to compare";
    return out;
  }
  if (P == 0 || !straggler) {
    out.verdict =
        "no spans to compare the ranks by: name the phases of a step with span() "
        "(data, forward, backward, optimizer)";
    return out;
  }
  auto s = *straggler;
  auto others_work = median_without(work_sorted, work[s]);
  auto lag = work[s] - others_work;
  double lag_pct =
      others_work > 0 ? 100.0 * static_cast<double>(lag) / static_cast<double>(others_work) : 0.0;
  if (lag <= 0 || lag_pct < o.threshold_pct) {
    out.verdict = "no rank holds the job back: the slowest, " + who(s) + ", works " +
                  detail::fixed(std::max(lag_pct, 0.0), 1) + " % more than the others' median (" +
                  ms(std::max<std::int64_t>(lag, 0)) + "), under the " +
                  detail::fixed(o.threshold_pct, 0) + " % threshold";
    return out;
  }
  Straggler st;
  st.rank = out.ranks[s].rank;
  st.node = out.ranks[s].node;
  st.lag_ns = lag;
  st.lag_pct = lag_pct;
  std::optional<std::size_t> slow_phase, wait_phase;
  for (std::size_t p = 0; p < P; ++p) {
    if (wait[p]) {
      // Where the others wait: the wait phase in which they exceed it most.
      if (!wait_phase || -dev(s, p) > -dev(s, *wait_phase)) wait_phase = p;
      continue;
    }
    if (!slow_phase || dev(s, p) > dev(s, *slow_phase)) slow_phase = p;
  }
  if (slow_phase) {
    st.phase = phases[*slow_phase];
    st.phase_kind = phase_kind(st.phase);
    if (st.phase_kind == "collective") st.phase_kind.clear();
    st.phase_excess_ns = dev(s, *slow_phase);
  }
  if (wait_phase) st.wait_phase = phases[*wait_phase];
  std::vector<std::int64_t> beyond;
  for (std::size_t i = 0; i < n; ++i)
    if (i != s) {
      beyond.push_back(waited[i] - waited[s]);
      if (waited[i] - waited[s] > lag / 4) out.ranks[i].waits_for = st.rank;
    }
  st.others_wait_ns = std::max<std::int64_t>(median_of(beyond), 0);
  st.slowest_steps = slowest_count[s];
  st.steps = out.steps.size();
  out.verdict = who(s) + " holds the job back: " + ms(lag) + " more work than the others' median";
  if (slow_phase)
    out.verdict += ", most in " + st.phase +
                   (st.phase_kind.empty() ? "" : " (" + st.phase_kind + ")") + ": +" +
                   ms(st.phase_excess_ns);
  if (wait_phase && st.others_wait_ns > 0) {
    out.verdict += "; the others wait " + ms(st.others_wait_ns) + " for it in " + st.wait_phase;
    std::string also;
    for (std::size_t p = 0; p < P; ++p)
      if (wait[p] && p != *wait_phase) also += (also.empty() ? "" : ", ") + phases[p];
    if (!also.empty()) out.verdict += " (and " + also + ")";
  }
  if (st.steps)
    out.verdict += "; slowest in " + std::to_string(st.slowest_steps) + " of " +
                   std::to_string(st.steps) + " steps";
  out.straggler = st;
  return out;
}

}  // namespace mainboard
