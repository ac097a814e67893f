#pragma once

// The JSON fields of a kernel summary, which every kernel view (KernelEfficiency, KernelCounters,
// the verdict's KernelStat) starts with: one list, whichever file defines the view's JSON.

#include "mainboard/profile.hpp"

namespace mainboard {

template <class V>
void fields(V& v, LaunchShape& m) {
  v("grid", m.grid);
  v("block", m.block);
  v("registers_per_thread", m.registers_per_thread);
  v("shared_bytes", m.shared_bytes);
}

/// The shape is flattened into the summary's object.
template <class V>
void fields(V& v, KernelSummary& m) {
  v("name", m.name);
  v("calls", m.calls);
  v("total_ns", m.total_ns);
  v("min_ns", m.min_ns);
  v("max_ns", m.max_ns);
  v("share_pct", m.share_pct);
  fields(v, m.shape);
}

}  // namespace mainboard
