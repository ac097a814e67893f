#pragma once

// `mainboard profile top`: the functions a program spends its time in, over the last interval
// and since the start, as py-spy top shows them, drawn from the profiles of each interval.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "mainboard/profile.hpp"

namespace mainboard::view {

/// A thread of the program as the kernel sees it now.
struct ThreadNow {
  std::int64_t tid = 0;
  std::string name;
  char state = '?';  ///< R running, S sleeping, D waiting for I/O, …
};

struct ProfileTopOptions {
  int width = 80;
  int height = 24;  ///< 0: every row
  bool color = false;
  /// "own", "total" (shares over the last interval), "own_time", "total_time" (since the start);
  /// largest first.
  std::string sort = "own";
  bool lines = true;    ///< a Python function split by line (file:line); else one row each
  bool native = false;  ///< keep native frames between and under Python frames
  std::optional<std::int64_t> thread;  ///< only this thread's samples
  bool paused = false;
  bool help = false;
  bool interactive = true;
  std::size_t max_rows = 0;  ///< with no height: at most this many rows (0: all)
  std::string title;         ///< what is sampled ("python3 train.py (pid 4242)")
  std::string status;        ///< the last line, when the caller has something to say
};

/// The keys of the view, as its help shows them.
const std::vector<std::pair<std::string, std::string>>& profile_top_keys();

class ProfileTop {
 public:
  /// One interval's samples, and the program's threads as they are now.
  void add(const Profile& interval, std::vector<ThreadNow> threads);
  /// Forgets every count: the times start again from the next interval.
  void reset();
  std::vector<std::string> render(const ProfileTopOptions& options) const;
  /// The threads seen so far, in the order they were first seen (`t` cycles through them).
  const std::vector<std::int64_t>& thread_order() const { return order_; }
  std::uint64_t total_samples() const { return samples_all_; }

  /// What a row counts: samples with it as the leaf (own) and anywhere on the stack (total).
  struct Tally {
    std::uint64_t own = 0, total = 0;
  };
  /// A row: the function, where (a Python file, or a native module) and the line (0: all).
  using Key = std::tuple<std::string, std::string, std::uint32_t>;
  struct Row {
    Key key;
    Tally now, all;
    bool python = false;
  };
  /// The rows the options ask for, in their order.
  std::vector<Row> rows(const ProfileTopOptions& options) const;

 private:
  struct PerThread {
    // [native][lines]: four tallies, as the options may switch between them at any time.
    std::map<Key, Tally> now[2][2], all[2][2];
    std::uint64_t samples_now = 0, samples_all = 0;
  };
  std::map<std::int64_t, PerThread> threads_;
  std::map<Key, bool> python_;
  std::vector<std::int64_t> order_;
  std::map<std::int64_t, std::string> names_;
  std::vector<ThreadNow> now_;
  std::uint64_t samples_all_ = 0, samples_now_ = 0, lost_now_ = 0, lost_all_ = 0;
  std::uint32_t hz_ = 0;
  double seconds_ = 0;
  std::int64_t first_ns_ = 0, last_ns_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace mainboard::view
