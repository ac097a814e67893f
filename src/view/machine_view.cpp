#include "mainboard/view.hpp"

#include <fmt/color.h>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "core/text.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/topology_matrix.hpp"
#include "view/format.hpp"

namespace mainboard {

namespace {

/// Up to this many GPUs get a cell each; more share one cell, a row each.
constexpr std::size_t kGpusInBoxes = 4;

using view::bytes;
using view::capacity_pair;
using view::fit;
using view::gauge;
using view::join;
using view::repeat;
using view::width_of;

/// Splits `text` at `separator`; the separator itself is dropped.
std::vector<std::string> split_on(const std::string& text, const std::string& separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (auto at = text.find(separator); at != std::string::npos; at = text.find(separator, start)) {
    out.push_back(text.substr(start, at - start));
    start = at + separator.size();
  }
  out.push_back(text.substr(start));
  return out;
}

/// Lines of at most `width` columns: a reading too long for one line breaks between its " · "
/// parts, a part too long between words; only a single word wider than the line is cut.
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  if (width_of(text) <= width || width == 0) return {text};
  // Pieces with the separator that goes before each: " · " between parts, " " between the words
  // of a part that needs breaking.
  std::vector<std::pair<std::string, std::string>> pieces;
  auto parts = split_on(text, " · ");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string before = i ? " · " : "";
    if (width_of(parts[i]) <= width) {
      pieces.emplace_back(before, parts[i]);
      continue;
    }
    auto words = split_on(parts[i], " ");
    for (std::size_t k = 0; k < words.size(); ++k)
      pieces.emplace_back(k ? " " : before,
                          width_of(words[k]) <= width ? words[k] : fit(words[k], width));
  }
  std::vector<std::string> lines;
  for (const auto& [before, piece] : pieces) {
    if (!lines.empty() && width_of(lines.back()) + width_of(before) + width_of(piece) <= width)
      lines.back() += before + piece;
    else
      lines.push_back(piece);
  }
  return lines;
}

/// Colours: one per kind of cell, none at all when colour is off.
struct Paint {
  bool on = false;
  std::string operator()(const std::string& s, fmt::text_style style) const {
    return on ? fmt::format(style, "{}", s) : s;
  }
  fmt::text_style memory() const { return fmt::fg(fmt::terminal_color::yellow); }
  fmt::text_style cpu() const { return fmt::fg(fmt::terminal_color::cyan); }
  fmt::text_style gpu() const { return fmt::fg(fmt::terminal_color::green); }
  fmt::text_style npu() const { return fmt::fg(fmt::terminal_color::magenta); }
  fmt::text_style arrow() const { return fmt::fg(fmt::terminal_color::bright_black); }
  fmt::text_style title() const { return fmt::emphasis::bold; }
  fmt::text_style dim() const { return fmt::emphasis::faint; }
};

/// Which network adapter is nearest each GPU on PCIe, as `topo` names the path: "Nearest NIC:
/// GPU0 ↔ mlx5_0 PIX · GPU1 ↔ mlx5_0 PIX"; empty without GPUs or adapters on PCIe.
std::string nearest_nic_line(const MachineSnapshot& s) {
  if (!s.pci) return {};
  auto near = nearest_nics(topology_matrix(*s.pci, nvlink_counts(s.gpus), s.cpu.info.numa_nodes));
  std::vector<std::string> pairs;
  for (const auto& n : near)
    pairs.push_back(core::terminal_text(n.gpu) + " ↔ " + core::terminal_text(n.nic) + " " +
                    to_string(n.path));
  if (pairs.empty()) return {};
  return "Nearest NIC: " + join(pairs);
}

/// A bordered cell: a title in its top border, one content row per line.
struct Cell {
  std::string title;
  std::vector<std::string> rows;
  fmt::text_style border;

  std::size_t height() const { return rows.size() + 2; }

  /// The width it needs: its title in the top border, its widest row between the borders.
  std::size_t natural_width() const {
    std::size_t w = width_of(title) + 6;
    for (const auto& r : rows)
      w = std::max(w, width_of(r) + 4);
    return w;
  }

  /// The same cell for `width` columns, nothing cut: rows wrap, and a title too long for the
  /// border keeps its kind ("GPU 0") and gives the rest to a first row.
  Cell reflowed(std::size_t width) const {
    Cell c{title, {}, border};
    std::size_t inner = width > 4 ? width - 4 : 1;
    std::vector<std::string> source = rows;
    if (width_of(title) + 6 > width) {
      auto dot = title.find(" · ");
      if (dot != std::string::npos) {
        c.title = title.substr(0, dot);
        source.insert(source.begin(), title.substr(dot + 4));
      }
    }
    for (const auto& r : source)
      for (auto& line : wrap(r, inner))
        c.rows.push_back(std::move(line));
    return c;
  }

  /// Line `i` of the cell drawn `width` columns wide (borders included).
  std::string line(std::size_t i, std::size_t width, const Paint& paint) const {
    std::size_t inner = width - 2;
    if (i == 0) {
      std::string t = " " + fit(title, inner > 4 ? inner - 4 : 0);
      while (!t.empty() && t.back() == ' ')
        t.pop_back();
      t += " ";
      std::size_t rest = inner > width_of(t) + 1 ? inner - width_of(t) - 1 : 0;
      return paint("╭─", border) + paint(t, paint.title()) + paint(repeat("─", rest) + "╮", border);
    }
    if (i + 1 == height()) return paint("╰" + repeat("─", inner) + "╯", border);
    return paint("│", border) + " " + fit(rows[i - 1], inner - 2) + " " + paint("│", border);
  }
};

std::string percent(double v) {
  return fmt::format("{:.0f} %", v);
}

/// fit() pads to the column; lines end without trailing blanks.
std::string rstrip_lines(const std::string& text) {
  std::string out, line;
  for (char c : text) {
    if (c != '\n') {
      line += c;
      continue;
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
    line.clear();
  }
  return out;
}

std::string memory_use(const Reading<Memory>& reading) {
  if (!reading) return "memory unavailable";
  const auto& m = *reading;
  if (!m.used_bytes) return bytes(m.total_bytes);
  return gauge(m.percent_used() / 100.0) + " " + capacity_pair(*m.used_bytes, m.total_bytes);
}

std::string pcie_label(const PcieReading& p) {
  if (!p.link_gen) return "PCIe";
  return fmt::format("PCIe {} x{}", *p.link_gen, p.link_width.value_or(0));
}

}  // namespace

// -----------------------------------------------------------------------------------------------

MachineView::MachineView(MachineSnapshot snapshot) : snapshot_(std::move(snapshot)) {}

MachineView MachineView::of(const Machine& machine) {
  return MachineView(machine.snapshot({.toolchain = false}));
}

std::string MachineView::metal_label(const std::string& value) {
  return core::metal_label(value);
}
std::string MachineView::bytes(std::uint64_t value) {
  return view::bytes(value);
}
std::string MachineView::capacity_pair(std::uint64_t used, std::uint64_t total) {
  return view::capacity_pair(used, total);
}
std::string MachineView::memory_usage(const Reading<Memory>& memory) {
  return memory_use(memory);
}

std::string MachineView::memory_title() const {
  bool unified = std::any_of(
      snapshot_.gpus.begin(), snapshot_.gpus.end(),
      [](const GpuSnapshot& g) { return g.telemetry.memory.or_empty().scope == "unified"; });
  return unified ? "Unified memory" : "Memory";
}

std::vector<std::string> MachineView::memory_rows() const {
  const auto& s = snapshot_;
  std::vector<std::string> rows;
  std::string total = s.memory ? bytes(s.memory->total_bytes) : "size unknown";
  const auto& hw = s.memory_hardware;
  const auto& cards = hw.cards.or_empty();
  if (!cards.empty()) {
    std::string type;
    for (const auto& c : cards)
      if (c.populated() && !c.type.empty()) type = c.type;
    total += " " + type + (hw.speed_mhz() ? "-" + std::to_string(*hw.speed_mhz()) : "");
  }
  rows.push_back(total);
  if (!cards.empty())
    rows.push_back(fmt::format("{} of {} DIMM slots", hw.slots_used(), hw.slots_total()));
  if (s.memory && s.memory->used_bytes)
    rows.push_back(gauge(s.memory->percent_used() / 100.0) + " " +
                   percent(s.memory->percent_used()) + " used");
  rows.push_back(swap_label());
  if (s.cgroup_memory)
    rows.push_back(s.cgroup_memory->limit_bytes
                       ? "cgroup cap " + bytes(*s.cgroup_memory->limit_bytes)
                       : std::string("no cgroup cap"));
  if (s.cpu.info.numa_nodes > 1)
    rows.push_back(fmt::format("{} NUMA nodes", s.cpu.info.numa_nodes));
  std::vector<std::string> sharing;
  for (const auto& g : s.gpus)
    if (g.telemetry.memory.or_empty().scope == "unified")
      sharing.push_back(fmt::format("GPU {}", g.info.index));
  for (const auto& n : s.npus)
    if (n.telemetry.memory.or_empty().unified)
      sharing.push_back(fmt::format("NPU {}", n.info.index));
  if (!sharing.empty()) rows.push_back("shared: " + join(sharing, ", "));
  return rows;
}

std::string MachineView::swap_label() const {
  const auto& hw = snapshot_.memory_hardware;
  if (const auto* d = snapshot_.diagnostic("swap"); d && d->status != ProbeStatus::ok)
    return "swap unknown";
  if (hw.swap_total_bytes == 0) return "swap none";
  return "swap " + capacity_pair(hw.swap_used_bytes, hw.swap_total_bytes);
}

std::string MachineView::cpu_title() const {
  return "CPU · " + snapshot_.cpu.info.label;
}

std::vector<std::string> MachineView::cpu_rows() const {
  const auto& c = snapshot_.cpu.info;
  std::vector<std::string> rows;
  rows.push_back(join({c.microarchitecture, c.architecture}));
  auto plural = [](std::uint32_t n, const char* what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
  };
  std::string counts =
      c.packages > 1
          ? fmt::format("{} × {}", c.packages, plural(c.cores / std::max(c.packages, 1u), "core"))
          : plural(c.cores, "core");
  rows.push_back(join({counts, plural(c.threads, "thread"),
                       c.numa_nodes > 1 ? plural(c.numa_nodes, "NUMA node") : ""}));
  std::vector<std::string> live;
  // The last-level cache says most about a machine; the others are in `mainboard snapshot`. A
  // guest's CPUID sizes are the hypervisor's description, not a fact about this machine: left out.
  static const std::vector<CacheInfo> kNone;
  const auto& caches = c.cache_source == CacheSource::hypervisor ? kNone : c.caches;
  const CacheInfo* last = nullptr;
  for (const auto& cache : caches)
    if (cache.type == "unified" && (!last || cache.level > last->level)) last = &cache;
  if (last) live.push_back(fmt::format("L{} {}", last->level, bytes(last->size_bytes)));
  if (!snapshot_.cpu.clocks.empty() && snapshot_.cpu.clocks.front().current_mhz)
    live.push_back(view::mhz(*snapshot_.cpu.clocks.front().current_mhz));
  live.push_back(snapshot_.cpu.load_1m ? fmt::format("load {:.2f}", *snapshot_.cpu.load_1m)
                                       : std::string("load unknown"));
  rows.push_back(join(live));
  return rows;
}

std::string MachineView::gpu_title(std::size_t index) const {
  const auto& g = snapshot_.gpus.at(index);
  return fmt::format("GPU {} · {}", g.info.index, g.info.label);
}

std::vector<std::string> MachineView::gpu_rows(std::size_t index) const {
  const auto& g = snapshot_.gpus.at(index);
  const auto& i = g.info;
  const auto& t = g.telemetry;
  const auto& util = t.utilization.or_empty();
  const auto& heat = t.thermal.or_empty();
  const auto& power_now = t.energy.or_empty();
  std::vector<std::string> rows;
  // The dispatch key (sm_90, gfx942) says something the family name does not; Apple's does not.
  bool key = !i.arch_key.empty() && i.provider != "apple" && i.arch_key != i.architecture;
  std::vector<std::string> id = {key ? join({i.architecture, i.arch_key}, " ") : i.architecture};
  if (i.sm_count) id.push_back(fmt::format("{} SMs", *i.sm_count));
  if (i.core_count) id.push_back(fmt::format("{} cores", *i.core_count));
  if (!i.metal_support.empty()) id.push_back(i.metal_support);
  if (i.peak_bandwidth_gbs) id.push_back(fmt::format("{:.0f} GB/s", *i.peak_bandwidth_gbs));
  rows.push_back(join(id));
  rows.push_back(t.memory.or_empty().scope == "unified" ? "unified with the CPU"
                                                        : memory_use(t.memory));
  // Most telling first, so a narrow cell cuts the least useful.
  std::vector<std::string> live;
  if (t.utilization.ok() && util.compute_pct) live.push_back(percent(*util.compute_pct) + " busy");
  if (heat.temperature_c) live.push_back(fmt::format("{:.0f} °C", *heat.temperature_c));
  if (power_now.power_w) live.push_back(fmt::format("{:.0f} W", *power_now.power_w));
  for (const auto& c : t.clocks)
    if ((c.domain == "sm" || c.domain == "graphics") && c.current_mhz) {
      live.push_back(fmt::format("{:.0f} MHz", *c.current_mhz));
      break;
    }
  if (g.fan_speed_pct) live.push_back(fmt::format("fan {:.0f} %", *g.fan_speed_pct));
  if (!g.processes.empty())
    live.push_back(
        fmt::format("{} process{}", g.processes.size(), g.processes.size() == 1 ? "" : "es"));
  if (live.empty() && !t.utilization.ok())
    live.push_back(t.utilization.reason().find("privileged") != std::string::npos
                       ? "clocks, power: privileged only"
                       : "no live readings");
  rows.push_back(join(live));
  return rows;
}

std::string MachineView::npu_title(std::size_t index) const {
  const auto& n = snapshot_.npus.at(index);
  return fmt::format("NPU {} · {}", n.info.index, n.info.label);
}

std::vector<std::string> MachineView::npu_rows(std::size_t index) const {
  const auto& n = snapshot_.npus.at(index);
  const auto& t = n.telemetry;
  const auto& util = t.utilization.or_empty();
  std::vector<std::string> live;
  for (const auto& c : t.clocks)
    live.push_back(fmt::format("{:.0f}{} MHz", c.current_mhz.value_or(0),
                               c.max_mhz ? fmt::format(" / {:.0f}", *c.max_mhz) : ""));
  if (t.utilization.ok() && util.compute_pct) live.push_back(percent(*util.compute_pct) + " busy");
  if (t.memory && t.memory->used_bytes && t.memory->source == MemorySource::npu_memory_utilization)
    live.push_back(bytes(*t.memory->used_bytes) + " mapped");
  return {join({n.info.architecture, n.info.driver}),
          live.empty() ? "no live readings" : join(live)};
}

std::string MachineView::gpu_group_title() const {
  const auto& gpus = snapshot_.gpus;
  bool alike = std::all_of(gpus.begin(), gpus.end(), [&](const GpuSnapshot& g) {
    return g.info.label == gpus.front().info.label;
  });
  return alike ? fmt::format("{} GPUs · {}", gpus.size(), gpus.front().info.label)
               : fmt::format("{} GPUs", gpus.size());
}

std::vector<std::string> MachineView::gpu_group_rows() const {
  const auto& gpus = snapshot_.gpus;
  std::vector<std::string> rows;
  // What they share once (identity, memory size), then a row per GPU: its index, memory in use
  // on a short gauge, and the live readings that tell a busy GPU from an idle one.
  bool alike = true;
  auto id = gpu_rows(0).front();
  for (std::size_t i = 1; i < gpus.size(); ++i)
    alike = alike && gpus[i].info.label == gpus[0].info.label && gpu_rows(i).front() == id;
  if (alike) {
    const auto& m = gpus.front().telemetry.memory;
    rows.push_back(m && m->scope != "unified" ? join({id, bytes(m->total_bytes) + " each"}) : id);
  }
  rows.push_back("GPU · memory in use · busy · temperature · power");
  for (const auto& g : gpus) {
    const auto& t = g.telemetry;
    const auto& util = t.utilization.or_empty();
    const auto& heat = t.thermal.or_empty();
    const auto& power_now = t.energy.or_empty();
    std::string head = std::to_string(g.info.index);
    if (!alike) head += " " + g.info.label;
    if (t.memory.or_empty().scope == "unified")
      head += " unified";
    else if (t.memory && t.memory->used_bytes)
      head += " " + gauge(t.memory->percent_used() / 100.0, 5) + " " + bytes(*t.memory->used_bytes);
    std::vector<std::string> parts{head};
    if (t.utilization.ok() && util.compute_pct) parts.push_back(percent(*util.compute_pct));
    if (heat.temperature_c) parts.push_back(fmt::format("{:.0f} °C", *heat.temperature_c));
    if (power_now.power_w) parts.push_back(fmt::format("{:.0f} W", *power_now.power_w));
    rows.push_back(join(parts));
  }
  return rows;
}

std::string MachineView::connection_label(UnitKind kind, std::size_t index) const {
  const auto& s = snapshot_;
  switch (kind) {
    case UnitKind::cpu: {
      for (const auto& c : s.memory_hardware.cards.or_empty())
        if (c.populated() && !c.type.empty())
          return s.memory_hardware.speed_mhz()
                     ? fmt::format("{}-{}", c.type, *s.memory_hardware.speed_mhz())
                     : c.type;
      return "memory bus";
    }
    case UnitKind::gpu: {
      const auto& g = s.gpus.at(index);
      if (g.telemetry.memory.or_empty().scope == "unified") return "unified";
      if (g.info.coherent) return "NVLink-C2C";
      return pcie_label(g.pcie.or_empty());
    }
    case UnitKind::npu: {
      const auto& n = s.npus.at(index);
      if (n.telemetry.memory.or_empty().scope == "unified" && n.info.provider == "apple")
        return "unified";
      if (n.info.driver == "intel_vpu" || n.info.driver == "amdxdna") return "on-die";
      return "PCIe";
    }
  }
  return {};
}

std::string MachineView::fabric_label() const {
  std::map<std::string, int> count;
  for (std::size_t i = 0; i < snapshot_.gpus.size(); ++i)
    ++count[connection_label(UnitKind::gpu, i)];
  for (std::size_t i = 0; i < snapshot_.npus.size(); ++i)
    ++count[connection_label(UnitKind::npu, i)];
  std::string best;
  int most = 0;
  for (const auto& [label, n] : count)
    if (n > most) {
      best = label;
      most = n;
    }
  return best;
}

std::string MachineView::compact_summary() const {
  const auto& s = snapshot_;
  std::vector<std::string> parts;
  parts.push_back(s.cpu.info.label);
  if (s.cpu.info.cores)
    parts.push_back(fmt::format("{} core{}", s.cpu.info.cores, s.cpu.info.cores == 1 ? "" : "s"));
  if (s.memory) parts.push_back(bytes(s.memory->total_bytes));
  // Accelerators grouped by name: "8 × NVIDIA H100 80GB HBM3".
  std::vector<std::pair<std::string, int>> groups;
  auto add = [&](const std::string& label) {
    for (auto& g : groups)
      if (g.first == label) {
        ++g.second;
        return;
      }
    groups.emplace_back(label, 1);
  };
  for (const auto& g : s.gpus)
    add(g.info.label);
  for (const auto& n : s.npus)
    add(n.info.label);
  if (groups.empty()) parts.push_back("no accelerator");
  for (const auto& [label, n] : groups)
    parts.push_back(n > 1 ? fmt::format("{} × {}", n, label) : label);
  if (auto fabric = fabric_label(); !fabric.empty() && !s.gpus.empty()) parts.push_back(fabric);
  if (s.cgroup_memory && s.cgroup_memory->limit_bytes)
    parts.push_back("cap " + bytes(*s.cgroup_memory->limit_bytes));
  if (s.scratch.found)
    parts.push_back("scratch " + s.scratch.path +
                    (s.scratch.free_bytes ? " (" + bytes(*s.scratch.free_bytes) + " free)" : ""));
  if (!s.hostname.empty()) parts.insert(parts.begin(), s.hostname);
  return join(parts);
}

std::string MachineView::render(const ViewOptions& options) const {
  Paint paint{options.color};
  const auto& s = snapshot_;
  std::size_t width = static_cast<std::size_t>(std::clamp(options.width, 20, 200));

  struct Placed {
    UnitKind kind;
    std::size_t index;
    Cell cell;
  };
  std::vector<Placed> units;
  units.push_back({UnitKind::cpu, 0, {cpu_title(), cpu_rows(), paint.cpu()}});
  for (std::size_t i = 0; i < s.gpus.size(); ++i)
    units.push_back({UnitKind::gpu, i, {gpu_title(i), gpu_rows(i), paint.gpu()}});
  for (std::size_t i = 0; i < s.npus.size(); ++i)
    units.push_back({UnitKind::npu, i, {npu_title(i), npu_rows(i), paint.npu()}});
  Cell memory{memory_title(), memory_rows(), paint.memory()};

  // Many GPUs: one cell with a compact row each, so eight fit on a screen.
  if (s.gpus.size() > kGpusInBoxes) {
    std::erase_if(units, [](const Placed& u) { return u.kind == UnitKind::gpu; });
    units.insert(units.begin() + 1,
                 {UnitKind::gpu, 0, {gpu_group_title(), gpu_group_rows(), paint.gpu()}});
  }

  std::string out;
  auto summary = [&] {
    if (auto nics = nearest_nic_line(s); !nics.empty())
      for (const auto& line : wrap(nics, width))
        out += paint(line, paint.dim()) + "\n";
    for (const auto& line : wrap(compact_summary(), width))
      out += paint(line, paint.dim()) + "\n";
  };
  if (width < 60) {
    // Too narrow for boxes side by side: each part as a labelled block, the connection in
    // brackets after its name.
    auto block = [&](const std::string& label, const std::string& title,
                     const std::vector<std::string>& rows) {
      auto head = wrap(title, width - 8);
      out += paint(fit(label, 7), paint.title()) + " " + head.front() + "\n";
      for (std::size_t i = 1; i < head.size(); ++i)
        out += std::string(8, ' ') + head[i] + "\n";
      for (const auto& r : rows)
        for (const auto& line : wrap(r, width - 8))
          if (!line.empty()) out += std::string(8, ' ') + line + "\n";
    };
    block("Memory", memory.rows.empty() ? "" : memory.rows.front(),
          std::vector<std::string>(memory.rows.begin() + (memory.rows.empty() ? 0 : 1),
                                   memory.rows.end()));
    for (const auto& u : units) {
      auto dot = u.cell.title.find(" · ");
      std::string label = dot == std::string::npos ? u.cell.title : u.cell.title.substr(0, dot);
      std::string title = dot == std::string::npos ? "" : u.cell.title.substr(dot + 4);
      block(label, title + " [" + connection_label(u.kind, u.index) + "]", u.cell.rows);
    }
    summary();
    return rstrip_lines(out);
  }

  // Columns: memory on the left, a gap for the arrows and their labels, the units on the right;
  // each as wide as it needs (a wide terminal does not stretch them), at most what there is.
  std::size_t gap = 12;
  std::size_t left =
      std::min(std::clamp<std::size_t>(width * 3 / 10, 24, 30), memory.natural_width());
  std::size_t right = 0;
  for (const auto& u : units)
    right = std::max(right, u.cell.natural_width());
  right = std::clamp<std::size_t>(right, 24, width - left - gap);
  memory = memory.reflowed(left);
  for (auto& u : units)
    u.cell = u.cell.reflowed(right);

  std::size_t right_height = 0;
  for (const auto& u : units)
    right_height += u.cell.height();
  std::size_t height = std::max(right_height, memory.height());
  // The memory cell stretches to the height of the units beside it.
  while (memory.height() < height)
    memory.rows.emplace_back();

  // Which right-hand line carries which unit's arrow (its first row) and label (the next).
  std::map<std::size_t, std::size_t> arrow_at, label_at;
  std::size_t y = 0;
  for (std::size_t k = 0; k < units.size(); ++k) {
    arrow_at[y + 1] = k;
    if (units[k].cell.height() > 3) label_at[y + 2] = k;
    y += units[k].cell.height();
  }

  y = 0;
  std::size_t unit = 0, unit_line = 0;
  for (std::size_t line = 0; line < height; ++line) {
    std::string mem = memory.line(line, left, paint);
    bool arrow = arrow_at.count(line) > 0;
    if (arrow && line + 1 < memory.height()) {
      // The memory cell's right border becomes a junction where an arrow leaves it.
      auto border = paint("│", memory.border);
      auto pos = mem.rfind(border);
      if (pos != std::string::npos) mem.replace(pos, border.size(), paint("├", memory.border));
    }
    std::string mid;
    if (arrow) {
      mid = paint(repeat("─", gap - 1) + "▶", paint.arrow());
    } else if (label_at.count(line)) {
      const auto& u = units[label_at[line]];
      std::string label = fit(connection_label(u.kind, u.index), gap - 2);
      while (!label.empty() && label.back() == ' ')
        label.pop_back();
      std::size_t pad = (gap - width_of(label)) / 2;
      mid = std::string(pad, ' ') + paint(label, paint.dim()) +
            std::string(gap - pad - width_of(label), ' ');
    } else {
      mid = std::string(gap, ' ');
    }
    std::string rhs;
    if (unit < units.size()) {
      rhs = units[unit].cell.line(unit_line, right, paint);
      if (++unit_line == units[unit].cell.height()) {
        ++unit;
        unit_line = 0;
      }
    }
    std::string full = mem + mid + rhs;
    while (!full.empty() && full.back() == ' ')
      full.pop_back();
    out += full + "\n";
  }
  summary();
  // Names (a board's, a CPU's, a GPU's) come from the machine and may hold anything.
  return core::terminal_text(out, options.color);
}

void MachineView::print(const ViewOptions& options) const {
  auto text = render(options);
  std::fwrite(text.data(), 1, text.size(), stdout);
}

int terminal_width(int fd) {
  winsize ws{};
  if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* columns = std::getenv("COLUMNS"))
    if (auto n = core::parse_u64(columns); n && *n > 0 && *n < 10000) return static_cast<int>(*n);
  return 80;
}

}  // namespace mainboard
