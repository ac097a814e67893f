#include <gtest/gtest.h>

#include "core/dynamic_library.hpp"
#include "symbols/libdw.hpp"

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

// elfutils is loaded when a frame is first named (symbols/libdw.hpp): what a user sees when it
// is not installed, or is not the library it should be.
TEST(Libdw, TheInstalledLibrariesFillEverySlot) {
  const auto& dw = mainboard::symbols::libdw();
  ASSERT_TRUE(dw) << dw.error;
  EXPECT_NE(dw.dwfl_begin, nullptr);
  EXPECT_NE(dw.gelf_getsym, nullptr);
  EXPECT_NE(dw.libdw_file->path().find("libdw"), std::string::npos);
  EXPECT_EQ(&dw, &mainboard::symbols::libdw());  // loaded once
}

TEST(Libdw, AMissingLibrarySaysWhichAndLeavesNoFunction) {
  auto dw = mainboard::symbols::load_libdw("/no/such/libdw.so.1", "libelf.so.1");
  EXPECT_FALSE(dw);
  EXPECT_NE(dw.error.find("/no/such/libdw.so.1 not loaded"), std::string::npos) << dw.error;
  EXPECT_EQ(dw.dwfl_begin, nullptr);
  auto elf = mainboard::symbols::load_libdw("libdw.so.1", "/no/such/libelf.so.1");
  EXPECT_NE(elf.error.find("/no/such/libelf.so.1 not loaded"), std::string::npos) << elf.error;
}

TEST(Libdw, ALibraryWithoutTheFunctionsNamesThem) {
  // Any other library in libdw's place: it loads, but has none of its functions.
  auto dw = mainboard::symbols::load_libdw(MAINBOARD_TEST_LIB, "libelf.so.1");
  EXPECT_FALSE(dw);
  EXPECT_NE(dw.error.find("lacks dwfl_begin, dwfl_end"), std::string::npos) << dw.error;
  EXPECT_NE(dw.gelf_getsym, nullptr);  // libelf's half is there
}
