#pragma once
// The tree of a profile's stack samples that flame graphs draw (the SVG and the HTML report):
// a node per distinct call path, its width the samples with that path on their stack.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/profile.hpp"
#include "profile/text_util.hpp"  // short_python_file

namespace mainboard::detail {

/// What a frame is, for its colour and legend.
enum class FrameKind : std::uint8_t { native, python, kernel, jit, unknown, root };

struct FlameNode {
  std::uint32_t name = 0;    ///< index into FlameTree::names
  std::uint32_t parent = 0;  ///< the root is its own parent
  std::uint32_t depth = 0;   ///< the root is 0
  std::uint64_t offset = 0;  ///< samples left of it among the whole tree's, for the layout
  std::uint64_t value = 0;   ///< samples with this path on their stack
  std::uint64_t self = 0;    ///< samples with this path as their whole stack
};

struct FlameName {
  std::string label;   ///< the function (a root: the command, a thread or a process)
  std::string detail;  ///< the module ("libc.so.6") or a Python frame's file
  FrameKind kind = FrameKind::native;
  /// The name this one has when frames are named by function alone (a Python frame's without
  /// its line; itself otherwise): an index into the same table (UINT32_MAX while unset).
  std::uint32_t function = UINT32_MAX;
};

/// Nodes in depth-first order, children ordered by label (as flamegraph.pl sorts them), so that
/// one function called from one place is one frame whatever the order of the samples.
struct FlameTree {
  std::vector<FlameName> names;
  std::vector<FlameNode> nodes;  ///< nodes[0]: the root, value = every sample counted
  std::uint32_t max_depth = 0;
};

/// A flame graph's root: the command's name (the folded stacks' root), or one per thread
/// ("name-TID") or per process (a merged job's rank, a child process's pid, else the command).
enum class FlameGrouping { command, thread, process };

/// The tree of every sample, under `grouping`'s roots; Python frames named with their line
/// (frame_label) unless `lines` is false.
FlameTree flame_tree(const Profile& p, FlameGrouping grouping, bool lines = true);

/// A tree per thread with samples (rooted at the command), over one table of names: the report
/// page's flame graphs, from one pass over the samples.
struct FlameForest {
  std::vector<FlameName> names;
  std::vector<std::pair<std::uint32_t, FlameTree>> trees;  ///< by thread; their `names` empty
};
FlameForest flame_trees_per_thread(const Profile& p);

/// Every frame's name as the pictures show it (Python frames with their line, each pointing at
/// its name by function alone), interned once: `of_frame[i]` is frame i's index into `names`.
struct FrameNames {
  std::vector<FlameName> names;
  std::vector<std::uint32_t> of_frame;
};
FrameNames frame_names(const Profile& p);

/// The command's short name as the root of folded stacks and flame graphs ("program" when the
/// profile names none); spaces become '_'.
std::string flame_root_name(const Profile& p);
/// A thread as a root: "name-TID", with its rank or process in a merged job.
std::string flame_thread_name(const Profile& p, std::uint32_t thread);
/// A thread's process as a root: "rank 3", "pid 4242" (a child of the command) or the command.
std::string flame_process_name(const Profile& p, std::uint32_t thread);

/// A name as one field of a folded line: ';' separates frames and a newline ends a line, so
/// neither (nor any other control character) may stand in it.
std::string folded_field(std::string name);

/// A frame's name in folded stacks and flame graphs: a native frame's function; a Python frame's
/// "function (file:line)" as py-spy writes it, or "function (file)" without `lines` (each
/// function one frame, whatever line it was at).
std::string frame_label(const StackFrame& f, bool lines);

FrameKind frame_kind(const StackFrame& f);
const char* to_string(FrameKind kind);

/// Stacks deeper than kDeepStack frames (a runaway recursion, or a hostile profile: one stack of
/// a million frames) are drawn and traced cut: their outermost kKeptOuter and innermost
/// kKeptInner frames, with one frame "[N frames not shown]" between. The pictures and the trace
/// then take memory in proportion to the profile, not to its depth times its samples.
inline constexpr std::size_t kDeepStack = 1024, kKeptOuter = 256, kKeptInner = 768;

/// What cutting left out: how many distinct stacks were cut, and the depth of the deepest.
struct StacksCut {
  std::uint64_t stacks = 0;
  std::uint64_t deepest = 0;
};

/// `p` itself when no stack is deeper than kDeepStack; else a copy of it, kept in `storage`,
/// with its deep stacks cut. `cut` (when given) says what was cut.
const Profile& cut_deep_stacks(const Profile& p, std::optional<Profile>& storage,
                               StacksCut* cut = nullptr);

/// Text for XML and HTML: &, <, >, " and ' as entities, control characters (XML 1.0 has none
/// but tab and newline) as U+FFFD, invalid UTF-8 repaired.
std::string xml_text(std::string_view s);

}  // namespace mainboard::detail
