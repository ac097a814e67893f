// _mainboard: the C++ library as seen from Python. It binds the public C++ API only (nothing here
// probes or analyses anything itself); models cross as the JSON documents the library writes, and
// the pure-Python package (python/mainboard) turns them into the reference's frozen models. The
// span hot path is plain CPython C API (span.cpp).
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "mainboard/arch_config.hpp"
#include "mainboard/busy.hpp"
#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/live.hpp"
#include "mainboard/log.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/meter.hpp"
#include "mainboard/nvidia.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/profile_report.hpp"
#include "mainboard/profiler.hpp"
#include "mainboard/sampler.hpp"
#include "mainboard/toolchain.hpp"
#include "mainboard/version.hpp"
#include "mainboard/view.hpp"
#include "python/src/span.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace mainboard::python {

namespace {

/// A flame graph's roots by name: "command", "thread" or "process".
FlameRoots roots_of(const std::string& name) {
  if (name == "command") return FlameRoots::command;
  if (name == "thread") return FlameRoots::thread;
  if (name == "process") return FlameRoots::process;
  throw py::value_error("roots is \"command\", \"thread\" or \"process\", not \"" + name + "\"");
}

/// A JSON document as Python objects (dict, list, str, int, float, bool, None): what the
/// package's models hold. Built here, it spares Python a JSON parse (and `import json`).
py::object to_python(const json& j) {
  switch (j.type()) {
    case json::value_t::object: {
      py::dict d;
      for (const auto& [key, value] : j.items())
        d[py::str(key)] = to_python(value);
      return d;
    }
    case json::value_t::array: {
      py::list l(j.size());
      std::size_t i = 0;
      for (const auto& value : j)
        l[i++] = to_python(value);
      return l;
    }
    case json::value_t::string: return py::str(j.get_ref<const std::string&>());
    case json::value_t::boolean: return py::bool_(j.get<bool>());
    case json::value_t::number_integer: return py::int_(j.get<std::int64_t>());
    case json::value_t::number_unsigned: return py::int_(j.get<std::uint64_t>());
    case json::value_t::number_float: return py::float_(j.get<double>());
    default: return py::none();
  }
}

template <class T>
py::object dump(const T& value) {
  json j = value;
  return to_python(j);
}

/// The same for a value computed without the GIL: JSON there, Python objects with it.
template <class F>
py::object computed(F&& f) {
  json j;
  {
    py::gil_scoped_release release;
    j = f();
  }
  return to_python(j);
}

/// A machine as Python holds it: the process-wide one, or one over a recorded host it owns.
struct PyMachine {
  std::shared_ptr<Machine> owned;
  const Machine* machine = nullptr;
  const Machine& get() const { return *machine; }
};

PyMachine machine_over(const std::string& sysroot, bool toolchain_cache) {
  PyMachine m;
  if (sysroot.empty() && toolchain_cache) {
    m.machine = &Machine::instance();
  } else {
    Machine::Options o;
    o.sysroot = sysroot;
    o.toolchain_cache = toolchain_cache;
    m.owned = std::make_shared<Machine>(o);
    m.machine = m.owned.get();
  }
  return m;
}

void bind_units(py::module_& m) {
  py::class_<Unit, std::shared_ptr<Unit>>(m, "_Unit")
      .def_property_readonly("kind", [](const Unit& u) { return std::string(to_string(u.kind())); })
      .def_property_readonly("label", &Unit::label)
      .def_property_readonly("architecture", &Unit::architecture)
      .def_property_readonly("vendor", &Unit::vendor)
      .def("memory", [](const Unit& u) { return dump(u.memory()); })
      .def("clocks", [](const Unit& u) { return dump(u.clock_readings()); })
      .def("utilization", [](const Unit& u) { return dump(u.utilization()); })
      .def("energy", [](const Unit& u) { return dump(u.energy()); })
      .def("thermal", [](const Unit& u) { return dump(u.thermal()); })
      .def("snapshot", [](const Unit& u, const std::string& name) {
        return computed([&] { return json(u.snapshot(name)); });
      });
  py::class_<Cpu, Unit, std::shared_ptr<Cpu>>(m, "_Cpu")
      .def("info", [](const Cpu& c) { return dump(c.info()); })
      .def("reading", [](const Cpu& c) { return dump(c.reading()); });
  py::class_<Gpu, Unit, std::shared_ptr<Gpu>>(m, "_Gpu")
      .def("info", [](const Gpu& g) { return dump(g.info()); })
      .def("pcie", [](const Gpu& g) { return dump(g.pcie()); })
      .def("memory_regions", [](const Gpu& g) { return dump(g.memory_regions()); })
      .def("fan_speed_pct", &Gpu::fan_speed_pct)
      .def("processes", [](const Gpu& g) { return dump(g.processes()); })
      .def("gpu_snapshot", [](const Gpu& g, const std::string& name) {
        return computed([&] { return json(g.gpu_snapshot(name)); });
      });
  py::class_<NvidiaGpu, Gpu, std::shared_ptr<NvidiaGpu>>(m, "_NvidiaGpu")
      .def("bindings",
           [](const NvidiaGpu& g) {
             auto b = g.bindings();
             py::dict d;
             d["nvml"] = b.nvml;
             d["cuda"] = b.cuda;
             d["nvml_error"] = b.nvml_error;
             d["cuda_error"] = b.cuda_error;
             d["cuda_device"] = b.cuda_device ? py::object(py::int_(*b.cuda_device)) : py::none();
             d["nvml_handle"] = b.nvml_handle;
             d["mig"] = b.mig;
             return d;
           })
      .def("nvml_memory", [](const NvidiaGpu& g) { return dump(g.nvml_memory()); })
      .def("runtime_memory",
           [](const NvidiaGpu& g) { return computed([&] { return json(g.runtime_memory()); }); });
  py::class_<Npu, Unit, std::shared_ptr<Npu>>(m, "_Npu")
      .def("info", [](const Npu& n) { return dump(n.info()); })
      .def("npu_snapshot", [](const Npu& n, const std::string& name) {
        return computed([&] { return json(n.npu_snapshot(name)); });
      });
}

void bind_machine(py::module_& m) {
  py::class_<PyMachine>(m, "_Machine")
      .def(py::init(&machine_over), py::arg("sysroot") = "", py::arg("toolchain_cache") = true)
      .def_property_readonly("sysroot",
                             [](const PyMachine& p) { return p.get().sysroot().string(); })
      .def_property_readonly("is_live", [](const PyMachine& p) { return p.get().is_live(); })
      .def(
          "snapshot",
          [](const PyMachine& p, bool toolchain) {
            return computed([&] { return json(p.get().snapshot({.toolchain = toolchain})); });
          },
          py::arg("toolchain") = true)
      .def("cpu",
           [](const PyMachine& p) {
             // The Cpu lives as long as the machine: alias it to the machine's lifetime.
             const Cpu& c = p.get().cpu();
             return std::shared_ptr<Cpu>(p.owned, const_cast<Cpu*>(&c));
           })
      .def("gpus",
           [](const PyMachine& p) {
             py::gil_scoped_release release;
             return p.get().gpus();
           })
      .def("npus",
           [](const PyMachine& p) {
             py::gil_scoped_release release;
             return p.get().npus();
           })
      .def("probe_gpus",
           [](const PyMachine& p, const std::string& provider) {
             py::gil_scoped_release release;
             return p.get().probe_gpus(provider);
           })
      .def("environment", [](const PyMachine& p) { return dump(p.get().environment()); })
      .def("board", [](const PyMachine& p) { return dump(p.get().board()); })
      .def("toolchain",
           [](const PyMachine& p) { return computed([&] { return json(p.get().toolchain()); }); })
      .def("compilers",
           [](const PyMachine& p) { return computed([&] { return json(p.get().compilers()); }); })
      .def("cuda",
           [](const PyMachine& p) { return computed([&] { return json(p.get().cuda_stack()); }); })
      .def("nvcc_path", [](const PyMachine& p) { return p.get().nvcc_path(); })
      .def("cuda_architecture", [](const PyMachine& p) { return p.get().cuda_architecture(); })
      .def("hostname", [](const PyMachine& p) { return p.get().hostname(); })
      .def("memory", [](const PyMachine& p) { return dump(p.get().memory()); })
      .def("memory_hardware",
           [](const PyMachine& p) {
             return computed([&] { return json(p.get().memory_hardware()); });
           })
      .def("cgroup_memory", [](const PyMachine& p) { return dump(p.get().cgroup_memory()); })
      .def("disk", [](const PyMachine& p) { return dump(p.get().disk()); })
      .def("scratch", [](const PyMachine& p) { return dump(p.get().scratch()); })
      .def("render", [](const PyMachine& p, bool color, int width) {
        py::gil_scoped_release release;
        return MachineView::of(p.get()).render({.color = color, .width = width});
      });
}

void bind_profiling(py::module_& m) {
  py::class_<Profile, std::shared_ptr<Profile>>(m, "_Profile")
      .def(py::init<>())
      .def("set_command", [](Profile& p, std::string command) { p.command = std::move(command); })
      .def_static("load",
                  [](const std::string& path) {
                    py::gil_scoped_release release;
                    return std::make_shared<Profile>(Profile::load(path));
                  })
      .def_static("parse",
                  [](const std::string& text) {
                    py::gil_scoped_release release;
                    return std::make_shared<Profile>(Profile::parse(text, "profile"));
                  })
      .def("document", [](const Profile& p) { return computed([&] { return json(p); }); })
      .def("save",
           [](const Profile& p, const std::string& path) {
             py::gil_scoped_release release;
             p.save(path);
           })
      .def("perfetto",
           [](const Profile& p, const std::string& path) {
             py::gil_scoped_release release;
             p.perfetto(path);
           })
      .def(
          "report", [](const Profile& p, std::size_t top) { return p.report(top); },
          py::arg("top") = SIZE_MAX)
      .def("stats", [](const Profile& p) { return dump(p.stats()); })
      .def("bottlenecks",
           [](const Profile& p, std::size_t top) { return dump(p.bottlenecks(top)); })
      .def("timeline", [](const Profile& p, std::size_t top) { return dump(p.timeline(top)); })
      .def("trace_report",
           [](const Profile& p, std::size_t top) { return dump(p.trace_report(top)); })
      .def("efficiency",
           [](const Profile& p, std::uint32_t sm_count, double peak, std::uint64_t bytes,
              std::uint32_t blocks_per_sm, std::size_t top) {
             return dump(p.efficiency({sm_count, peak, bytes, blocks_per_sm, top}));
           })
      .def("counter_bottlenecks",
           [](const Profile& p, std::size_t top) { return dump(p.counter_bottlenecks(top)); })
      .def("hot_functions",
           [](const Profile& p, std::size_t top, bool by_total) {
             return dump(
                 p.hot_functions(top, by_total ? FunctionOrder::total : FunctionOrder::self));
           })
      .def("hot_stacks", [](const Profile& p, std::size_t top) { return dump(p.hot_stacks(top)); })
      .def("kernel_summaries", [](const Profile& p) { return dump(p.kernel_summaries()); })
      .def("diff", [](const Profile& p, const Profile& baseline) { return dump(p.diff(baseline)); })
      .def("diff_report",
           [](const Profile& p, const Profile& baseline) { return p.diff(baseline).report(); })
      .def("folded", [](const Profile& p, const std::string& roots,
                        bool lines) { return p.folded(roots_of(roots), lines); })
      .def("flamegraph_svg",
           [](const Profile& p, const std::string& roots, const std::string& title, int width,
              const std::string& path, bool lines) {
             FlameOptions o;
             o.roots = roots_of(roots);
             o.title = title;
             o.width = width;
             o.lines = lines;
             if (!path.empty()) p.write_flamegraph_svg(path, o);
             return p.flamegraph_svg(o);
           })
      .def("html_report",
           [](const Profile& p, const std::string& title, std::size_t top, const std::string& path,
              bool lines) {
             HtmlOptions o;
             o.title = title;
             o.top = top;
             o.lines = lines;
             auto page = p.html_report(o);
             if (!path.empty()) p.write_html_report(path, o);
             return page;
           })
      .def("speedscope", &Profile::speedscope_json)
      .def("pprof",
           [](const Profile& p, const std::string& path) {
             auto bytes = p.pprof();
             if (!path.empty()) p.write_pprof(path);
             return py::bytes(bytes);
           })
      .def_static(
          "merge_ranks",
          [](const std::vector<std::shared_ptr<Profile>>& ranks,
             const std::vector<std::string>& names) {
            std::vector<Profile> copies;
            for (const auto& r : ranks)
              copies.push_back(*r);
            py::gil_scoped_release release;
            return std::make_shared<Profile>(Profile::merge_ranks(std::move(copies), names));
          })
      .def("ranks",
           [](const Profile& p, const std::string& step,
              const std::vector<std::string>& collectives, double threshold_pct, std::size_t top) {
             return dump(p.ranks({step, collectives, threshold_pct, top}));
           })
      .def("ranks_report",
           [](const Profile& p, const std::string& step,
              const std::vector<std::string>& collectives, double threshold_pct, std::size_t top) {
             return p.ranks({step, collectives, threshold_pct, top}).report(top);
           });

  py::class_<SpanToken>(m, "_SpanToken")
      .def_readonly("depth", &SpanToken::depth)
      .def_readonly("session", &SpanToken::session);

  py::class_<Profiler>(m, "_Profiler")
      .def(py::init([](std::uint32_t features, std::uint32_t activities, std::uint32_t device_index,
                       std::uint32_t sample_interval_ms, std::uint64_t max_spans, bool strict,
                       bool machine_snapshot, const PyMachine* machine) {
             Collection c;
             c.features = static_cast<Feature>(features);
             c.activities = static_cast<Activity>(activities);
             c.device_index = device_index;
             c.sample_interval_ms = sample_interval_ms;
             c.max_spans = max_spans;
             c.strict = strict;
             c.machine_snapshot = machine_snapshot;
             c.machine = machine ? machine->machine : nullptr;
             py::gil_scoped_release release;
             return std::make_unique<Profiler>(c);
           }),
           py::arg("features"), py::arg("activities"), py::arg("device_index") = 0,
           py::arg("sample_interval_ms") = 50, py::arg("max_spans") = 100000,
           py::arg("strict") = false, py::arg("machine_snapshot") = false,
           py::arg("machine") = nullptr)
      .def_property_readonly("active", &Profiler::active)
      .def("stop", &Profiler::stop, py::call_guard<py::gil_scoped_release>())
      .def("stop_sampler", &Profiler::stop_sampler, py::call_guard<py::gil_scoped_release>())
      .def("sample", &Profiler::sample, py::call_guard<py::gil_scoped_release>())
      .def("enter", &Profiler::enter)
      .def("exit", [](Profiler& p, const SpanToken& t) { p.exit(t); })
      .def("exit_after",
           [](Profiler& p, const SpanToken& t, std::int64_t wall_ns) { p.exit(t, wall_ns); })
      .def("result",
           [](const Profiler& p) {
             py::gil_scoped_release release;
             return std::make_shared<Profile>(p.result());
           })
      .def("traced_activities", [](const Profiler& p) { return to_string(p.traced_activities()); });
}

/// On Python's main thread (where Python handles signals), Ctrl-C caught by the library while
/// a long call runs without the GIL, so that it ends the call at once, as in the command;
/// elsewhere, nothing (the main thread keeps Python's handler).
std::unique_ptr<InterruptScope> ctrl_c_scope() {
  static const unsigned long main_thread = [] {
    return py::module_::import("threading")
        .attr("main_thread")()
        .attr("ident")
        .cast<unsigned long>();
  }();
  if (PyThread_get_thread_ident() != main_thread) return nullptr;
  return std::make_unique<InterruptScope>(std::vector<int>{SIGINT});
}

/// SampleOptions from the package's dict (its Sampler and Collection, flattened).
SampleOptions sample_options(const py::dict& d) {
  SampleOptions o;
  auto get = [&](const char* key, auto& into) {
    if (d.contains(key)) into = d[key].cast<std::remove_reference_t<decltype(into)>>();
  };
  if (d.contains("call_graph"))  // else SampleOptions' default
    o.call_graph =
        d["call_graph"].cast<std::string>() == "fp" ? CallGraph::frame_pointers : CallGraph::dwarf;
  std::uint32_t features = static_cast<std::uint32_t>(o.features);
  std::uint32_t activities = static_cast<std::uint32_t>(o.activities);
  get("features", features);
  get("activities", activities);
  o.features = static_cast<Feature>(features);
  o.activities = static_cast<Activity>(activities);
  get("hz", o.hz);
  get("children", o.children);
  get("kernel", o.kernel);
  get("python", o.python);
  get("wall", o.wall);
  get("gil", o.gil);
  get("pause", o.pause);
  get("nonblocking", o.nonblocking);
  get("timeout_s", o.timeout_s);
  get("duration_s", o.duration_s);
  get("max_samples", o.max_samples);
  get("max_spans", o.max_spans);
  get("strict", o.strict);
  return o;
}

void bind_sampling(py::module_& m) {
  m.def("_run", [](const std::vector<std::string>& argv, const py::dict& options) {
    auto o = sample_options(options);
    RunResult r;
    int interrupted = 0;
    {
      auto scope = ctrl_c_scope();
      py::gil_scoped_release release;
      r = Sampler::run(argv, o);
      if (scope) interrupted = scope->signal();
    }
    return py::make_tuple(std::make_shared<Profile>(std::move(r.profile)), r.exit_code, r.signal,
                          r.timed_out, interrupted);
  });
  m.def("_attach", [](std::int64_t pid, const py::dict& options) {
    auto o = sample_options(options);
    auto scope = ctrl_c_scope();
    std::shared_ptr<Profile> profile;
    {
      py::gil_scoped_release release;
      profile = std::make_shared<Profile>(Sampler::attach(pid, o));
    }
    return py::make_tuple(profile, scope ? scope->signal() : 0);
  });
  m.def("_dump", [](std::int64_t pid, bool all_threads, bool native, bool async_aware,
                    bool subprocesses, bool nonblocking, bool locals) {
    py::gil_scoped_release release;
    DumpOptions options;
    options.all_threads = all_threads;
    options.native = native;
    options.async_aware = async_aware;
    options.nonblocking = nonblocking;
    options.locals = locals;
    auto dumps = subprocesses ? Sampler::dump_tree(pid, options)
                              : std::vector<StackDump>{Sampler::dump(pid, options)};
    auto with_text = [](const StackDump& d) {
      json j = d;
      j["text"] = d.text();
      return j;
    };
    json j = with_text(dumps.front());
    if (subprocesses) {
      j["subprocesses"] = json::array();
      for (std::size_t i = 1; i < dumps.size(); ++i)
        j["subprocesses"].push_back(with_text(dumps[i]));
    }
    py::gil_scoped_acquire acquire;
    return to_python(j);
  });
}

void bind_measurements(py::module_& m) {
  py::class_<Meter>(m, "_Meter")
      .def(
          py::init([](const PyMachine& machine) { return std::make_unique<Meter>(machine.get()); }),
          py::keep_alive<1, 2>())
      .def("sample", &Meter::sample, py::call_guard<py::gil_scoped_release>())
      .def("stop", &Meter::stop, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("elapsed_s", &Meter::elapsed_s)
      .def_property_readonly("peak_host_gb", &Meter::peak_host_gb)
      .def_property_readonly("peak_gpu_gb", &Meter::peak_gpu_gb)
      .def_property_readonly("host_delta_gb", &Meter::host_delta_gb)
      .def_property_readonly("samples", &Meter::samples)
      .def_property_readonly("peak_rss_bytes", &Meter::peak_rss_bytes)
      .def_property_readonly("peak_pss_bytes", &Meter::peak_pss_bytes)
      .def_property_readonly("peak_rss_delta_bytes", &Meter::peak_rss_delta_bytes)
      .def_property_readonly("peak_pss_delta_bytes", &Meter::peak_pss_delta_bytes)
      .def_property_readonly("rss_at_start_bytes", &Meter::rss_at_start_bytes)
      .def_property_readonly("peak_rss_from_kernel", &Meter::peak_rss_from_kernel)
      .def_property_readonly("energy_json",
                             [](const Meter& meter) { return json(meter.energy()).dump(); });

  m.def("_gpu_busy", [](const PyMachine& machine, std::size_t index, double util, double memory) {
    py::gil_scoped_release release;
    return gpu_busy(machine.get(), index, {util, memory});
  });
  m.def("_wait_for_idle",
        [](const PyMachine& machine, std::size_t index, double timeout, double poll, double util,
           double memory, std::function<void(double)> sleep) {
          py::gil_scoped_release release;
          // The sleep is Python's: it takes the GIL back for each call.
          std::function<void(double)> wait;
          if (sleep)
            wait = [&sleep](double s) {
              py::gil_scoped_acquire acquire;
              sleep(s);
            };
          return wait_for_idle(machine.get(), index, timeout, poll, {util, memory}, wait);
        });
  m.def("_profile", [](std::function<void()> fn, std::uint32_t iters, std::uint32_t warmup,
                       std::function<void()> sync, std::uint32_t kinds, std::uint32_t device_index,
                       const PyMachine& machine, std::uint32_t stack_hz) {
    ProfileOptions o;
    o.stack_hz = stack_hz;
    o.iters = iters;
    o.warmup = warmup;
    o.kinds = static_cast<Activity>(kinds);
    o.device_index = device_index;
    o.machine = &machine.get();
    auto call = [](const std::function<void()>& f) {
      py::gil_scoped_acquire acquire;
      f();
    };
    if (sync) o.sync = [&] { call(sync); };
    Profile evidence;
    ProfileReport r;
    {
      py::gil_scoped_release release;
      r = profile([&] { call(fn); }, o, &evidence);
    }
    return py::make_tuple(dump(r), std::make_shared<Profile>(std::move(evidence)));
  });
  m.def("_report_from_profile",
        [](const Profile& evidence, std::uint32_t iterations, double peak_bandwidth_gbps,
           std::optional<std::uint32_t> supported, std::optional<std::uint32_t> requested) {
          auto kinds = [](std::optional<std::uint32_t> k) -> std::optional<Activity> {
            if (!k) return std::nullopt;
            return static_cast<Activity>(*k);
          };
          return dump(ProfileReport::from_profile(evidence, iterations, peak_bandwidth_gbps,
                                                  kinds(supported), kinds(requested)));
        });
  m.def("_target_exit_summary", [](int exit_code, int signal, bool timed_out) {
    return TargetExit{exit_code, signal, timed_out}.summary();
  });
  m.def("_report_text", [](const std::string& report_json) {
    return json::parse(report_json).get<ProfileReport>().report();
  });
}

ToolProbe probe_of(const py::dict& d) {
  ToolProbe p;
  p.name = d["name"].cast<std::string>();
  auto category = d["category"].cast<std::string>();
  bool known = false;
  for (auto c :
       {ToolCategory::c, ToolCategory::cxx, ToolCategory::cuda, ToolCategory::hip,
        ToolCategory::fortran, ToolCategory::mpi, ToolCategory::build, ToolCategory::python})
    if (category == to_string(c)) {
      p.category = c;
      known = true;
    }
  if (!known) throw py::value_error("unknown tool category '" + category + "'");
  p.binaries = d["binaries"].cast<std::vector<std::string>>();
  p.version_args = d["version_args"].cast<std::vector<std::string>>();
  p.pattern = d["pattern"].cast<std::string>();
  return p;
}

std::shared_ptr<const Runner> path_runner() {
  const char* path = std::getenv("PATH");
  return std::make_shared<LocalRunner>(path ? path : "");
}

void bind_tools_and_view(py::module_& m) {
  m.def("_tool_probes", [] {
    py::list out;
    for (const auto& p : tool_probes())
      out.append(py::dict(py::arg("name") = p.name, py::arg("category") = to_string(p.category),
                          py::arg("binaries") = p.binaries,
                          py::arg("version_args") = p.version_args,
                          py::arg("pattern") = p.pattern));
    return out;
  });
  m.def("_detect", [](const py::dict& d) {
    auto probe = probe_of(d);
    return computed([&] { return json(probe.detect(*path_runner())); });
  });
  m.def("_probe_toolchain", [](const py::list& probes) {
    std::vector<ToolProbe> table;
    for (const auto& p : probes)
      table.push_back(probe_of(p.cast<py::dict>()));
    return computed([&] { return json(Toolchain::probe(*path_runner(), table)); });
  });

  // A snapshot's schematic (a notebook's view of a MachineSnapshot): its JSON document in.
  m.def("_render_snapshot", [](const std::string& document, int width) {
    auto snapshot = json::parse(document).get<MachineSnapshot>();
    return MachineView(std::move(snapshot)).render({.color = false, .width = width});
  });

  // The live view (`mainboard top`): a machine read again and again, frames as JSON documents,
  // and a frame drawn as lines.
  py::class_<MachineWatch>(m, "_MachineWatch")
      .def(py::init([](const PyMachine& machine, bool all_processes) {
             return std::make_unique<MachineWatch>(machine.get(), all_processes);
           }),
           py::keep_alive<1, 2>())
      .def("next",
           [](MachineWatch& w) {
             LiveFrame f;
             {
               py::gil_scoped_release release;
               f = w.next();
             }
             return json(f).dump(-1, ' ', false, json::error_handler_t::replace);
           })
      .def("list_all_processes", &MachineWatch::list_all_processes);
  py::class_<LiveView>(m, "_LiveView")
      .def(py::init<std::size_t>())
      .def("add", [](LiveView& v,
                     const std::string& frame) { v.add(json::parse(frame).get<LiveFrame>()); })
      .def("render", [](const LiveView& v, int width, int height, bool color,
                        const std::string& sort, bool ascending, const std::string& filter,
                        std::optional<std::uint32_t> gpu, bool tree) {
        LiveViewOptions o;
        o.width = width;
        o.height = height;
        o.color = color;
        o.sort = sort;
        o.ascending = ascending;
        o.filter = filter;
        o.gpu = gpu;
        o.tree = tree;
        o.interactive = false;
        return v.render(o);
      });

  py::class_<MachineView>(m, "_MachineView")
      .def(py::init([](const PyMachine& machine) {
        py::gil_scoped_release release;
        return std::make_unique<MachineView>(MachineView::of(machine.get()));
      }))
      .def("render", [](const MachineView& v, bool color,
                        int width) { return v.render({.color = color, .width = width}); })
      .def("compact_summary", &MachineView::compact_summary)
      .def("memory_title", &MachineView::memory_title)
      .def("memory_rows", &MachineView::memory_rows)
      .def("cpu_title", &MachineView::cpu_title)
      .def("cpu_rows", &MachineView::cpu_rows)
      .def("gpu_title", &MachineView::gpu_title)
      .def("gpu_rows", &MachineView::gpu_rows)
      .def("npu_title", &MachineView::npu_title)
      .def("npu_rows", &MachineView::npu_rows)
      .def("connection_label",
           [](const MachineView& v, const std::string& kind, std::size_t i) {
             auto k = kind == "gpu" ? UnitKind::gpu : kind == "npu" ? UnitKind::npu : UnitKind::cpu;
             return v.connection_label(k, i);
           })
      .def("fabric_label", &MachineView::fabric_label)
      .def("swap_label", &MachineView::swap_label)
      .def_static("metal_label", &MachineView::metal_label)
      .def_static("bytes", &MachineView::bytes)
      .def_static("capacity_pair", &MachineView::capacity_pair)
      .def_static("memory_usage", [](const std::string& memory_json) {
        json reading = json::parse(memory_json);
        // Where the figure came from does not change how it is drawn, and a model made in
        // Python may name a source the library does not know.
        if (reading.is_object()) reading.erase("source");
        if (!reading.contains("unavailable")) {  // fields the caller left out keep their defaults
          json taken = Memory{};
          taken.update(reading);
          reading = std::move(taken);
        }
        return MachineView::memory_usage(reading.get<Reading<Memory>>());
      });
}

void bind_arch_config(py::module_& m) {
  using PyArchConfig = ArchConfig<py::object>;
  auto info = [](const std::string& arch_key, const std::string& architecture) {
    GpuInfo g;
    g.arch_key = arch_key;
    g.architecture = architecture;
    return g;
  };
  py::class_<PyArchConfig>(m, "_ArchConfig")
      .def(py::init<py::object>())
      .def("set", [](PyArchConfig& c, const std::string& key,
                     py::object value) { c.set(key, std::move(value)); })
      .def("lookup",
           [info](const PyArchConfig& c, const std::string& arch_key,
                  const std::string& architecture) {
             return c.lookup(info(arch_key, architecture));
           })
      .def("resolve",
           [info](const PyArchConfig& c, const std::string& arch_key,
                  const std::string& architecture) {
             return c.resolve(info(arch_key, architecture));
           })
      .def_property_readonly("fallback", &PyArchConfig::fallback);
  m.def("_arch_family", [](const std::string& key) { return arch_family(key); });
  // The library's log lines to a Python callable (level index, message), or back to stderr.
  // The callable is kept for the life of the process (never released: a sink may still be
  // destroyed after the interpreter has gone); the package puts stderr back at exit.
  m.def("_set_log_handler", [](py::object handler) {
    if (handler.is_none()) {
      set_log_sink({});
      return;
    }
    PyObject* callable = handler.release().ptr();
    set_log_sink([callable](LogLevel level, std::string_view message) {
      if (!Py_IsInitialized()) return;
      py::gil_scoped_acquire gil;
      PyObject* text =
          PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "replace");
      PyObject* result =
          text ? PyObject_CallFunction(callable, "iO", static_cast<int>(level), text) : nullptr;
      Py_XDECREF(text);
      if (!result) PyErr_WriteUnraisable(callable);
      Py_XDECREF(result);
    });
  });
  m.def("_family_key", [](const std::string& name) { return family_key(name); });
}

}  // namespace

}  // namespace mainboard::python

PYBIND11_MODULE(_mainboard, m) {
  using namespace mainboard::python;
  m.doc() = "The C++ core of the mainboard package (use `import mainboard`).";
  m.attr("__version__") = mainboard::kVersion;
  static py::exception<mainboard::Error> error(m, "MainboardError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const mainboard::Interrupted& e) {
      // Ctrl-C during a dump: what Python raises for Ctrl-C anywhere else.
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const mainboard::Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  if (!add_span_functions(m.ptr())) throw py::error_already_set();
  bind_units(m);
  bind_machine(m);
  bind_profiling(m);
  bind_sampling(m);
  bind_measurements(m);
  bind_arch_config(m);
  bind_tools_and_view(m);
}
