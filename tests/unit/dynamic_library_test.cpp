#include <gtest/gtest.h>

#include "core/dynamic_library.hpp"

using mainboard::core::DynamicLibrary;

TEST(DynamicLibrary, LoadsTheFirstCandidateThatExists) {
  std::string error;
  auto lib = DynamicLibrary::open({"/no/such/libfoo.so", MAINBOARD_TEST_LIB}, &error);
  ASSERT_TRUE(lib.loaded()) << error;
  EXPECT_NE(lib.path().find("mainboard_test_lib"), std::string::npos);
  auto* plain = lib.symbol<int()>("mb_plain");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain(), 7);
  EXPECT_EQ(lib.symbol<int()>("mb_missing"), nullptr);
}

TEST(DynamicLibrary, PrefersTheNewestVersionedSymbol) {
  auto lib = DynamicLibrary::open({MAINBOARD_TEST_LIB});
  const char* found = nullptr;
  auto* f = lib.first_symbol<int()>({"mb_answer_v3", "mb_answer_v2", "mb_answer"}, &found);
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(found, "mb_answer_v2");
  EXPECT_EQ(f(), 42);
  EXPECT_EQ(lib.first_symbol<int()>({"nope_v2", "nope"}), nullptr);
}

TEST(DynamicLibrary, MissingLibrarySaysWhy) {
  std::string error;
  auto lib = DynamicLibrary::open({"/no/such/libnvidia-ml.so.1"}, &error);
  EXPECT_FALSE(lib.loaded());
  EXPECT_NE(error.find("libnvidia-ml.so.1"), std::string::npos);
  EXPECT_EQ(lib.symbol<int()>("x"), nullptr);  // safe on an unloaded library
}

TEST(DynamicLibrary, MovesOwnership) {
  auto a = DynamicLibrary::open({MAINBOARD_TEST_LIB});
  DynamicLibrary b = std::move(a);
  EXPECT_TRUE(b.loaded());
  EXPECT_FALSE(a.loaded());  // NOLINT(bugprone-use-after-move): moved-from state is defined
}
