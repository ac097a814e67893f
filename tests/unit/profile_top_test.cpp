// `profile top`'s table: what each row counts over the interval and since the start, with and
// without native frames, by line or by function, for one thread or all.
#include <gtest/gtest.h>

#include "view/format.hpp"
#include "view/profile_top.hpp"

using namespace mainboard;
using view::ProfileTop;
using view::ProfileTopOptions;

namespace {

Profile interval() {
  Profile p;
  p.sample_hz = 100;
  p.start_ns = 1'000'000'000;
  p.end_ns = 2'000'000'000;
  auto py = [](const char* f, std::uint32_t line) {
    return StackFrame{f, "[python]", "/srv/busy.py", line, false};
  };
  p.frames = {py("hot", 5),                                                              // 0
              py("hot", 4),                                                              // 1
              py("cold", 8),                                                             // 2
              py("<module>", 15),                                                        // 3
              StackFrame{"_PyEval_EvalFrameDefault", "libpython3.11.so", "", 0, false},  // 4
              StackFrame{"sgemm_", "libblas.so.3", "", 0, false}};                       // 5
  p.stacks = {{0, 4, 3}, {1, 2, 4, 3}, {5, 0, 3}};
  p.threads = {ThreadInfo{0, 100, "MainThread", 0}, ThreadInfo{1, 101, "worker", 0}};
  for (int i = 0; i < 6; ++i)
    p.samples.push_back({0, 0, 0});
  for (int i = 0; i < 3; ++i)
    p.samples.push_back({0, 0, 1});
  p.samples.push_back({0, 1, 2});
  return p;
}

const ProfileTop::Row* find(const std::vector<ProfileTop::Row>& rows, const std::string& f,
                            std::uint32_t line = 0) {
  for (const auto& r : rows)
    if (std::get<0>(r.key) == f && std::get<2>(r.key) == line) return &r;
  return nullptr;
}

}  // namespace

TEST(ProfileTop, RowsCountOwnAndTotalAsPySpyTopDoes) {
  ProfileTop top;
  top.add(interval(), {{100, "python3", 'R'}, {101, "worker", 'S'}});
  ProfileTopOptions o;
  auto rows = top.rows(o);
  // Python frames only: time in sgemm_ is its Python caller's (hot, line 5).
  auto* hot5 = find(rows, "hot", 5);
  ASSERT_NE(hot5, nullptr);
  EXPECT_EQ(hot5->now.own, 7u);
  EXPECT_EQ(hot5->all.total, 7u);
  EXPECT_EQ(find(rows, "hot", 4)->now.own, 3u);
  EXPECT_EQ(find(rows, "cold", 8)->now.total, 3u);
  EXPECT_EQ(find(rows, "cold", 8)->now.own, 0u);
  EXPECT_EQ(find(rows, "<module>", 15)->now.total, 10u);
  EXPECT_EQ(find(rows, "sgemm_"), nullptr);
  EXPECT_EQ(find(rows, "_PyEval_EvalFrameDefault"), nullptr);
  // Sorted by the interval's own share.
  EXPECT_EQ(std::get<0>(rows[0].key), "hot");
  EXPECT_EQ(std::get<2>(rows[0].key), 5u);

  o.native = true;
  rows = top.rows(o);
  EXPECT_EQ(find(rows, "sgemm_")->now.own, 1u);
  EXPECT_EQ(find(rows, "hot", 5)->now.own, 6u);
  EXPECT_EQ(find(rows, "hot", 5)->now.total, 7u);
  EXPECT_EQ(find(rows, "_PyEval_EvalFrameDefault")->now.total, 9u);

  o.native = false;
  o.lines = false;
  rows = top.rows(o);
  auto* hot = find(rows, "hot", 0);
  ASSERT_NE(hot, nullptr);
  EXPECT_EQ(hot->now.own, 10u);
  EXPECT_EQ(hot->now.total, 10u);

  o.lines = true;
  o.thread = 101;
  rows = top.rows(o);
  EXPECT_EQ(find(rows, "hot", 5)->now.own, 1u);
  EXPECT_EQ(find(rows, "hot", 4), nullptr);
}

TEST(ProfileTop, TheIntervalStartsAfreshAndTheTimesAddUp) {
  ProfileTop top;
  top.add(interval(), {});
  Profile quiet = interval();
  quiet.samples = {{0, 0, 1}};
  quiet.start_ns = 2'000'000'000;
  quiet.end_ns = 3'000'000'000;
  top.add(quiet, {{100, "python3", 'R'}});
  ProfileTopOptions o;
  o.sort = "own_time";
  auto rows = top.rows(o);
  auto* hot4 = find(rows, "hot", 4);
  EXPECT_EQ(hot4->now.own, 1u);
  EXPECT_EQ(hot4->all.own, 4u);
  EXPECT_EQ(find(rows, "hot", 5)->now.own, 0u);
  EXPECT_EQ(find(rows, "hot", 5)->all.own, 7u);
  EXPECT_EQ(std::get<2>(rows[0].key), 5u) << "own_time: the most since the start first";
  EXPECT_EQ(top.total_samples(), 11u);

  o.width = 100;
  o.height = 0;
  o.title = "python3 busy.py (pid 100)";
  std::string text;
  for (const auto& l : top.render(o))
    text += l + "\n";
  EXPECT_NE(text.find("python3 busy.py (pid 100) · 100 Hz · 2.00s"), std::string::npos) << text;
  EXPECT_NE(text.find("samples 11 (this interval 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("1 thread: 1 running"), std::string::npos) << text;
  // hot line 4: 100 % of this interval, 0.04 s since the start.
  EXPECT_NE(text.find("100.0%  100.0%     0.04s      0.04s  hot (busy.py:4)"), std::string::npos)
      << text;
  for (int h : {10, 24}) {
    o.height = h;
    o.width = 60;
    auto lines = top.render(o);
    EXPECT_EQ(lines.size(), static_cast<std::size_t>(h));
    for (const auto& l : lines)
      EXPECT_LE(view::width_of(l), 60u) << l;
  }

  top.reset();
  EXPECT_TRUE(top.rows(ProfileTopOptions{}).empty());
  EXPECT_EQ(top.total_samples(), 0u);
}
