// The pictures of a profile: the SVG flame graph against the folded stacks of the same samples,
// and the HTML report's page data against the profile's own analyses. What a browser makes of
// them is checked by tests/js/pictures_check.mjs in a headless Chromium.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "core/text.hpp"
#include "export/flame.hpp"
#include "mainboard/profile.hpp"

namespace mainboard {
namespace {

Profile sampled() {
  Profile p;
  p.pid = 7;
  p.command = "app";
  p.sample_hz = 100;
  p.threads = {{0, 70, "main"}, {1, 71, "worker"}, {2, 90, "child (pid 90)"}};
  p.frames = {{"main", "app", "app.c", 10, false},
              {"compute", "app", "app.c", 20, false},
              {"kernel_loop", "app", "app.c", 30, true},
              {"io_wait", "libc.so.6", "", 0, false},
              {"train_step", "[python]", "train.py", 12, false},
              {"[kernel]", "[kernel]", "", 0, false}};
  p.stacks = {{2, 1, 0}, {3, 0}, {1, 1, 0}, {5, 4, 0}};  // leaf first; the third recursive
  for (int i = 0; i < 6; ++i)
    p.samples.push_back({i * 10'000'000, 0, 0});
  for (int i = 0; i < 3; ++i)
    p.samples.push_back({i * 10'000'000, 1, 1});
  p.samples.push_back({95'000'000, 1, 2});
  p.samples.push_back({96'000'000, 2, 3});
  p.samples.push_back({97'000'000, 2, 3});
  p.end_ns = 100'000'000;
  return p;
}

/// Every call path of folded stacks ("a;b;c"), with the samples under it.
std::map<std::string, std::uint64_t> paths_of_folded(const std::string& folded) {
  std::map<std::string, std::uint64_t> out;
  for (auto line : core::split_lines(folded)) {
    auto space = line.rfind(' ');
    auto n = *core::parse_u64(line.substr(space + 1));
    std::string path;
    for (auto frame : core::split(line.substr(0, space), ';')) {
      path += (path.empty() ? "" : ";") + std::string(frame);
      out[path] += n;
    }
  }
  return out;
}

std::string unescape(std::string s) {
  for (auto [entity, c] :
       {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}})
    for (std::size_t at; (at = s.find(entity)) != std::string::npos;)
      s.replace(at, std::string_view(entity).size(), c);
  return s;
}

struct SvgFrame {
  std::string name, kind;
  std::uint64_t offset, value, depth;
  double x, width;
};

std::vector<SvgFrame> frames_of_svg(const std::string& svg) {
  static const std::regex frame(
      R"re(<g class="f" data-n="([^"]*)" data-k="(\w+)" data-o="(\d+)" data-v="(\d+)" data-d="(\d+)"><title>[^<]*</title><rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)")re");
  std::vector<SvgFrame> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), frame); it != std::sregex_iterator();
       ++it) {
    const auto& m = *it;
    out.push_back({unescape(m[1]), m[2], std::stoull(m[3]), std::stoull(m[4]), std::stoull(m[5]),
                   std::stod(m[6]), std::stod(m[7])});
  }
  return out;
}

/// The SVG's frames as call paths, from their depth-first order.
std::map<std::string, std::uint64_t> paths_of_svg(const std::vector<SvgFrame>& frames) {
  std::map<std::string, std::uint64_t> out;
  std::vector<std::string> stack;
  for (const auto& f : frames) {
    stack.resize(f.depth);
    stack.push_back(f.name);
    std::string path;
    for (const auto& s : stack)
      path += (path.empty() ? "" : ";") + s;
    out[path] += f.value;
  }
  return out;
}

TEST(Pictures, TheSvgFramesAreTheFoldedStacksWithTheirSamples) {
  auto p = sampled();
  for (auto roots : {FlameRoots::command, FlameRoots::thread, FlameRoots::process}) {
    FlameOptions o;
    o.roots = roots;
    auto svg = p.flamegraph_svg(o);
    auto frames = frames_of_svg(svg);
    ASSERT_FALSE(frames.empty()) << svg.substr(0, 2000);
    // The SVG has one root above the folded stacks' roots; the folded roots are its children.
    auto svg_paths = paths_of_svg(frames);
    std::map<std::string, std::uint64_t> below_root;
    for (const auto& [path, n] : svg_paths)
      if (auto cut = path.find(';'); cut != std::string::npos)
        below_root[roots == FlameRoots::command ? path : path.substr(cut + 1)] = n;
    auto folded = paths_of_folded(p.folded(roots));
    if (roots == FlameRoots::command) folded.erase("app");
    EXPECT_EQ(below_root, folded) << p.folded(roots);
    EXPECT_EQ(frames[0].value, p.samples.size());
    // Widths in proportion to samples: the plot is 1200 - 2 × 10 pixels wide.
    for (const auto& f : frames)
      EXPECT_NEAR(f.width, 1180.0 * static_cast<double>(f.value) / p.samples.size(), 0.01)
          << f.name;
  }
  // Each thread and each process its own root.
  FlameOptions o;
  o.roots = FlameRoots::process;
  auto by_process = frames_of_svg(p.flamegraph_svg(o));
  std::map<std::string, std::uint64_t> roots;
  for (const auto& f : by_process)
    if (f.depth == 1) roots[f.name] = f.value;
  EXPECT_EQ(roots, (std::map<std::string, std::uint64_t>{{"app-7", 10}, {"pid 90", 2}}));
}

TEST(Pictures, SvgFramesSayWhatCodeTheyAreAndEscapeTheirNames) {
  auto p = sampled();
  p.frames[1].function = "std::vector<int>::operator<(\"a\" & 'b')";
  auto svg = p.flamegraph_svg();
  EXPECT_EQ(svg.find("vector<int>"), std::string::npos);
  EXPECT_NE(svg.find("std::vector&lt;int&gt;::operator&lt;(&quot;a&quot; &amp; &#39;b&#39;)"),
            std::string::npos);
  std::map<std::string, std::string> kinds;
  for (const auto& f : frames_of_svg(svg))
    kinds[f.name] = f.kind;
  EXPECT_EQ(kinds["app"], "root");
  EXPECT_EQ(kinds["main"], "native");
  EXPECT_EQ(kinds["train_step (train.py:12)"], "python");  // as py-spy names Python frames
  EXPECT_EQ(kinds["[kernel]"], "kernel");
  // The viewer is inside: nothing is fetched from anywhere.
  EXPECT_NE(svg.find("<script type=\"text/ecmascript\"><![CDATA["), std::string::npos);
  EXPECT_EQ(svg.find("xlink:href"), std::string::npos);
  EXPECT_EQ(svg.find(" src="), std::string::npos);
}

// py-spy's names: a Python frame is "function (file:line)" in the folded stacks and the SVG, its
// file as short as py-spy makes it; by function, a function's lines are one frame.
TEST(Pictures, PythonFramesAreNamedWithTheirLineOrAsOneFunction) {
  Profile p;
  p.command = "python3";
  p.threads = {{0, 70, "MainThread"}};
  const std::string torch = "/usr/lib/python3/dist-packages/torch/nn/modules/module.py";
  p.frames = {{"step", "[python]", "/home/u/train.py", 30, false},
              {"step", "[python]", "/home/u/train.py", 31, false},
              {"Module._call_impl", "[python]", torch, 1194, false},
              {"<module>", "[python]", "/home/u/train.py", 50, false},
              {"sgemm_", "libblas.so.3", "", 0, false}};
  p.stacks = {{4, 2, 0, 3}, {1, 3}};
  for (int i = 0; i < 3; ++i)
    p.samples.push_back({i, 0, 0});
  p.samples.push_back({5, 0, 1});
  auto lines = paths_of_folded(p.folded(FlameRoots::command));
  EXPECT_EQ(lines["python3;<module> (train.py:50);step (train.py:30);"
                  "Module._call_impl (torch/nn/modules/module.py:1194);sgemm_"],
            3u);
  EXPECT_EQ(lines["python3;<module> (train.py:50);step (train.py:31)"], 1u);
  auto functions = paths_of_folded(p.folded(FlameRoots::command, false));
  EXPECT_EQ(functions["python3;<module> (train.py);step (train.py)"], 4u);
  // The SVG alike: two frames of step by line, one by function.
  auto count = [](const std::vector<SvgFrame>& frames, const std::string& prefix) {
    return std::count_if(frames.begin(), frames.end(),
                         [&](const SvgFrame& f) { return f.name.rfind(prefix, 0) == 0; });
  };
  EXPECT_EQ(count(frames_of_svg(p.flamegraph_svg()), "step (train.py:"), 2);
  FlameOptions by_function;
  by_function.lines = false;
  auto svg = frames_of_svg(p.flamegraph_svg(by_function));
  EXPECT_EQ(count(svg, "step (train.py)"), 1);
  EXPECT_EQ(count(svg, "step (train.py:"), 0);
  EXPECT_EQ(detail::short_python_file("/usr/lib/python3.11/threading.py"), "threading.py");
  EXPECT_EQ(detail::short_python_file(
                "/root/.pyenv/versions/3.12.1/lib/python3.12/importlib/__init__.py"),
            "importlib/__init__.py");
  EXPECT_EQ(detail::short_python_file("/venv/lib/python3.11/site-packages/numpy/core/a.py"),
            "numpy/core/a.py");
  EXPECT_EQ(detail::short_python_file("train.py"), "train.py");
  EXPECT_EQ(detail::short_python_file("<string>"), "<string>");
}

TEST(Pictures, FramesNarrowerThanATenthOfAPixelAreLeftOutButCounted) {
  auto p = sampled();
  p.samples.clear();
  for (int i = 0; i < 100000; ++i)
    p.samples.push_back({i, 0, 0});
  p.samples.push_back({100001, 1, 1});  // io_wait: 1 of 100 001, 0.012 px
  auto svg = p.flamegraph_svg();
  auto frames = frames_of_svg(svg);
  EXPECT_EQ(frames[0].value, 100001u);
  for (const auto& f : frames)
    EXPECT_NE(f.name, "io_wait");
  EXPECT_NE(svg.find("1 narrower than 0.1 px left out"), std::string::npos);
}

TEST(Pictures, AProfileWithoutSamplesIsAnEmptyPictureNotAnError) {
  Profile p;
  auto frames = frames_of_svg(p.flamegraph_svg());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].value, 0u);
  EXPECT_EQ(frames[0].name, "program");
  auto html = p.html_report();
  EXPECT_NE(html.find("<!DOCTYPE html>"), std::string::npos);
}

/// The page's data: the JSON in its script element.
nlohmann::json page_data(const std::string& html) {
  const std::string open = R"(<script type="application/json" id="mb-data">)";
  auto at = html.find(open);
  EXPECT_NE(at, std::string::npos);
  at += open.size();
  auto end = html.find("</script>", at);
  return nlohmann::json::parse(html.substr(at, end - at));
}

/// The page's numbers: base 32, the last digit of each from the first half of the alphabet.
std::vector<std::uint64_t> page_numbers(const std::string& text) {
  const std::string digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVabcdefghijklmnopqrstuvWXYZwxyz-_";
  std::vector<std::uint64_t> out;
  std::uint64_t n = 0;
  for (char c : text) {
    auto v = digits.find(c);
    EXPECT_NE(v, std::string::npos) << c;
    n = n * 32 + (v & 31);
    if (v < 32) {
      out.push_back(n);
      n = 0;
    }
  }
  return out;
}

/// The page's tree of call paths and its threads' samples, read back as the page's script does.
struct PageSamples {
  std::vector<std::string> label;  // per node; node 0 the root
  std::vector<std::size_t> parent;
  struct Track {
    std::uint64_t thread = 0, samples = 0;
    std::vector<std::size_t> nodes;
    std::vector<std::int64_t> times_ns;
    std::vector<std::pair<std::size_t, std::uint64_t>> counts;
  };
  std::vector<Track> tracks;
  std::string path(std::size_t node) const {
    std::string out;
    for (; node != 0; node = parent[node])
      out = label[node] + (out.empty() ? "" : ";") + out;
    return out;
  }
};

PageSamples decode_samples(const nlohmann::json& d) {
  PageSamples page;
  page.label = {"(root)"};
  page.parent = {0};
  auto v = page_numbers(d["tree"]["text"]);
  std::vector<std::size_t> open{0};
  std::int64_t depth = 0;
  for (std::size_t k = 0; k + 1 < v.size(); k += 2) {
    auto at = depth + 1 - static_cast<std::int64_t>(v[k + 1]);
    EXPECT_GE(at, 1);
    open.resize(static_cast<std::size_t>(at));
    page.label.push_back(d["names"][v[k]][0]);
    page.parent.push_back(open.back());
    open.push_back(page.parent.size() - 1);
    depth = at;
  }
  EXPECT_EQ(page.parent.size(), d["tree"]["nodes"].get<std::size_t>() + 1);
  const auto tick = d["tick_ns"].get<std::int64_t>();
  for (const auto& t : d["tracks"]) {
    PageSamples::Track track;
    track.thread = t["thread"];
    track.samples = t["samples"];
    for (auto n : page_numbers(t["order"]))
      track.nodes.push_back(n);
    std::int64_t at = 0, delta = 0;
    for (auto x : page_numbers(t["times"])) {
      if (x & 1) {
        for (auto r = (x - 1) / 2; r > 0; --r)
          track.times_ns.push_back((at += delta) * tick);
      } else {
        delta = static_cast<std::int64_t>(x / 2);
        track.times_ns.push_back((at += delta) * tick);
      }
    }
    EXPECT_EQ(track.times_ns.size(), track.nodes.size());
    if (t.contains("counts")) {
      auto c = page_numbers(t["counts"]);
      std::size_t node = 0;
      for (std::size_t k = 0; k + 1 < c.size(); k += 2)
        track.counts.emplace_back(node += c[k], c[k + 1]);
    }
    page.tracks.push_back(std::move(track));
  }
  return page;
}

TEST(Pictures, TheHtmlPageCarriesTheProfilesOwnFigures) {
  auto p = sampled();
  p.paths = {"train", "train/step", "train/step/forward"};
  p.spans = {{0, 0, 0, 90'000'000},
             {1, 0, 1'000'000, 40'000'000},
             {2, 0, 2'000'000, 30'000'000},
             {1, 1, 50'000'000, 60'000'000}};
  p.span_stats = {
      {"train", "train", 1, 90'000'000, 50'000'000, 90'000'000, 90'000'000},
      {"train/step", "step", 2, 49'000'000, 21'000'000, 10'000'000, 39'000'000},
      {"train/step/forward", "forward", 1, 28'000'000, 28'000'000, 28'000'000, 28'000'000}};
  auto html = p.html_report();
  auto d = page_data(html);
  EXPECT_EQ(d["title"], "mainboard profile of app");
  EXPECT_EQ(d["meta"]["samples"], 12);
  // Every sampled thread's samples, in time order, each the call path of its stack.
  auto page = decode_samples(d);
  ASSERT_EQ(page.tracks.size(), 3u);
  std::map<std::uint64_t, std::uint64_t> per_thread;
  for (const auto& t : page.tracks)
    per_thread[t.thread] = t.samples;
  EXPECT_EQ(per_thread, (std::map<std::uint64_t, std::uint64_t>{{0, 6}, {1, 4}, {2, 2}}));
  const auto& worker = page.tracks[1];
  ASSERT_EQ(worker.nodes.size(), 4u);
  EXPECT_EQ(page.path(worker.nodes[0]), "main;io_wait");
  EXPECT_EQ(page.path(worker.nodes[3]), "main;compute;compute");  // at 95 ms, the last
  EXPECT_EQ(worker.times_ns, (std::vector<std::int64_t>{0, 10'000'000, 20'000'000, 95'000'000}));
  EXPECT_EQ(page.path(page.tracks[2].nodes[0]), "main;train_step (train.py:12);[kernel]");
  // One tree for every thread: main;compute, in threads 0 and 1, is one node.
  EXPECT_EQ(page.parent.size(), 8u);  // the root and 7 paths: main, main;compute, ...
  // The functions' table is hot_functions', row for row.
  auto hot = p.hot_functions(50);
  ASSERT_EQ(d["functions"].size(), hot.size());
  for (std::size_t i = 0; i < hot.size(); ++i) {
    EXPECT_EQ(d["functions"][i][0], hot[i].function);
    EXPECT_DOUBLE_EQ(d["functions"][i][3].get<double>(), hot[i].total_pct);
  }
  EXPECT_EQ(d["regions"].size(), 3u);
  EXPECT_EQ(d["spans"]["rows"].size(), 4u);
  // At most max_spans on the timeline: the longest, and the count of all.
  HtmlOptions o;
  o.max_spans = 2;
  o.top = 1;  // the hottest by self time, and the hottest by total time
  auto few = page_data(p.html_report(o));
  ASSERT_EQ(few["functions"].size(), 2u);
  EXPECT_EQ(few["functions"][0][0], "kernel_loop");
  EXPECT_EQ(few["functions"][1][0], "main");
  ASSERT_EQ(few["spans"]["rows"].size(), 2u);
  EXPECT_EQ(few["spans"]["all"], 4);
  EXPECT_EQ(few["spans"]["rows"][0][3], 90'000'000);
  EXPECT_EQ(few["spans"]["rows"][1][3], 39'000'000);
}

// However varied the stacks, the page keeps at most 100 000 frames: the narrowest are left out
// (and said to be), their samples still counted in their callers.
TEST(Pictures, TheHtmlPageLeavesOutTheNarrowestFramesOfAVastProfile) {
  Profile p;
  p.threads = {{0, 1, "main"}};
  p.frames.push_back({"main", "app", "", 0, false});
  for (std::uint32_t i = 1; i <= 100500; ++i) {
    p.frames.push_back({"leaf_" + std::to_string(i), "app", "", 0, false});
    p.stacks.push_back({i, 0});
    p.samples.push_back({i, 0, i - 1});
  }
  for (int i = 0; i < 4; ++i)
    p.samples.push_back({200000 + i, 0, 7});  // leaf_8: 5 samples
  auto d = page_data(p.html_report());
  EXPECT_EQ(d["flame_left_out"]["nodes"], 100499);
  EXPECT_EQ(d["flame_left_out"]["below_samples"], 2);
  auto page = decode_samples(d);
  ASSERT_EQ(page.parent.size(), 3u);  // the root, main, leaf_8
  ASSERT_EQ(page.tracks.size(), 1u);
  std::map<std::string, std::uint64_t> paths;
  for (auto n : page.tracks[0].nodes)
    ++paths[page.path(n)];
  EXPECT_EQ(paths, (std::map<std::string, std::uint64_t>{{"main", 100499}, {"main;leaf_8", 5}}));
}

// Past 200 000 samples the page draws every n-th sample in time order, and carries each
// thread's exact counts per call path beside them: a million samples stay a page to mail.
TEST(Pictures, TheHtmlPageOfAMillionSamplesKeepsExactCounts) {
  Profile p;
  p.command = "app";
  p.sample_hz = 1000;
  p.threads = {{0, 1, "main"}, {1, 2, "worker"}};
  p.frames = {
      {"main", "app", "", 0, false}, {"a", "app", "", 0, false}, {"b", "app", "", 0, false}};
  p.stacks = {{1, 0}, {2, 0}};
  for (std::uint32_t i = 0; i < 500'000; ++i) {
    p.samples.push_back({i * 1'000'000LL, 0, i % 3 == 0 ? 1u : 0u});
    p.samples.push_back({i * 1'000'000LL, 1, 0});
  }
  auto html = p.html_report();
  EXPECT_LT(html.size(), 2u << 20);
  auto d = page_data(html);
  EXPECT_EQ(d["step"], 5);
  auto page = decode_samples(d);
  ASSERT_EQ(page.tracks.size(), 2u);
  const auto& main = page.tracks[0];
  EXPECT_EQ(main.samples, 500'000u);
  EXPECT_EQ(main.nodes.size(), 100'000u);
  EXPECT_EQ(main.times_ns[1], 5'000'000);  // every fifth
  std::map<std::string, std::uint64_t> counts;
  for (const auto& [node, n] : main.counts)
    counts[page.path(node)] += n;
  EXPECT_EQ(counts,
            (std::map<std::string, std::uint64_t>{{"main;a", 333'333}, {"main;b", 166'667}}));
}

TEST(Pictures, TheHtmlPageFetchesNothingAndNoNameCanEndItsScript) {
  auto p = sampled();
  p.frames[0].function = "</script><script>alert(1)</script>";
  p.threads[0].name = "<img src=x onerror=alert(2)>";
  auto html = p.html_report();
  // The data's element and the viewer's: two script ends, no third a name could have opened.
  std::size_t ends = 0;
  for (std::size_t at = 0; (at = html.find("</script>", at)) != std::string::npos; ++at)
    ++ends;
  EXPECT_EQ(ends, 2u);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  auto d = page_data(html);
  bool found = false;
  for (const auto& n : d["names"])
    found = found || n[0] == "</script><script>alert(1)</script>";
  EXPECT_TRUE(found);
  // No address to load from: no src or href attributes in the markup (the data is text), a
  // policy that allows nothing remote.
  auto data_at = html.find(R"(id="mb-data">)");
  auto markup = html.substr(0, data_at) + html.substr(html.find("</script>", data_at));
  EXPECT_EQ(markup.find(" src="), std::string::npos);
  EXPECT_EQ(markup.find(" href="), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
}

// A hostile (or runaway) profile: one stack of a million frames, sampled again and again. The
// trace, the SVG and the page keep its outermost 256 and innermost 768 frames with one frame
// saying how many are not shown; the trace's metadata says what was cut. Before, the trace
// repeated the whole stack in every sample's event (a 2.2 MB profile took 4.27 GB).
TEST(Pictures, AMillionFrameStackIsDrawnCutWithWhatWasCut) {
  constexpr std::uint32_t kDepth = 1'000'000;
  Profile p;
  p.pid = 7;
  p.command = "app";
  p.sample_hz = 100;
  p.threads = {{0, 70, "main"}};
  p.frames = {{"main", "app", "", 0, false},
              {"recurse", "app", "", 0, false},
              {std::string(5000, 'x'), "app", "", 0, false}};
  std::vector<std::uint32_t> stack(kDepth, 1);  // leaf first: the long name, recursion, main
  stack.front() = 2;
  stack.back() = 0;
  p.stacks = {stack, {1, 0}};
  for (int i = 0; i < 10; ++i)
    p.samples.push_back({i * 10'000'000, 0, static_cast<std::uint32_t>(i % 2)});
  p.end_ns = 100'000'000;
  const std::string marker = "[998976 frames not shown]";  // 1 000 000 - 256 - 768

  auto svg = frames_of_svg(p.flamegraph_svg());
  std::uint64_t deepest = 0;
  bool said = false;
  for (const auto& f : svg) {
    deepest = std::max(deepest, f.depth);
    if (f.name == marker) {
      said = true;
      EXPECT_EQ(f.depth, 257u);  // under the root and the 256 outermost frames
      EXPECT_EQ(f.value, 5u);
    }
  }
  EXPECT_TRUE(said) << "no frame says what was cut";
  EXPECT_EQ(deepest, 1025u);

  auto d = page_data(p.html_report());
  bool named = false;
  for (const auto& n : d["names"])
    named = named || n[0] == marker;
  EXPECT_TRUE(named);
  EXPECT_LE(decode_samples(d).parent.size(), 1100u);

  auto text = p.perfetto_json();
  EXPECT_LT(text.size(), 2'000'000u);
  auto t = nlohmann::json::parse(text);
  EXPECT_EQ(t["metadata"]["stacks_cut"]["stacks"], 1);
  EXPECT_EQ(t["metadata"]["stacks_cut"]["deepest"], kDepth);
  EXPECT_EQ(t["stackFrames"].size(), 1025u);  // 1 024 frames kept and the one saying so
  bool in_frames = false;
  for (const auto& [id, f] : t["stackFrames"].items())
    in_frames = in_frames || f["name"] == marker;
  EXPECT_TRUE(in_frames);
  int events = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "i") continue;
    ++events;
    EXPECT_LE(e["name"].get<std::string>().size(), 256u);
    const auto stack_text = e["args"]["stack"].get<std::string>();
    auto lines = core::split_lines(stack_text);
    EXPECT_LE(lines.size(), 65u);  // 64 frames and the line saying how many more
    for (auto line : lines)
      EXPECT_LE(line.size(), 256u);
    if (lines.size() > 2) {
      EXPECT_EQ(lines.front(), "[999936 frames not shown]");
    }
  }
  EXPECT_EQ(events, 10);
}

}  // namespace
}  // namespace mainboard
