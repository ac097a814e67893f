#include <gtest/gtest.h>
#include <unistd.h>

#include "core/dynamic_library.hpp"
#include "host/libhwloc.hpp"
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

// hwloc is loaded when the topology is first read (host/libhwloc.hpp).
TEST(Libhwloc, TheInstalledLibraryFillsEverySlotAndCountsThisMachine) {
  const auto& hwloc = mainboard::host::libhwloc();
  ASSERT_TRUE(hwloc) << hwloc.error;
  EXPECT_EQ(hwloc.hwloc_get_api_version() >> 16, HWLOC_API_VERSION >> 16);
  hwloc_topology_t topo = nullptr;
  ASSERT_EQ(hwloc.hwloc_topology_init(&topo), 0);
  hwloc.hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
  ASSERT_EQ(hwloc.hwloc_topology_load(topo), 0);
  // The two helpers hwloc.h has inline, rebuilt on the table: as many PUs as CPUs online.
  EXPECT_EQ(hwloc.nbobjs_by_type(topo, HWLOC_OBJ_PU),
            static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)));
  auto* pu = hwloc.obj_by_type(topo, HWLOC_OBJ_PU, 0);
  ASSERT_NE(pu, nullptr);
  EXPECT_EQ(pu->type, HWLOC_OBJ_PU);
  EXPECT_EQ(hwloc.obj_by_type(topo, HWLOC_OBJ_PU, 100000), nullptr);
  EXPECT_EQ(hwloc.nbobjs_by_type(topo, HWLOC_OBJ_PCI_DEVICE), 0);  // filtered out: no such depth
  hwloc.hwloc_topology_destroy(topo);
  EXPECT_EQ(&hwloc, &mainboard::host::libhwloc());  // loaded once
}

TEST(Libhwloc, AMissingOrWrongLibrarySaysWhy) {
  auto missing = mainboard::host::load_libhwloc("/no/such/libhwloc.so.15");
  EXPECT_FALSE(missing);
  EXPECT_NE(missing.error.find("/no/such/libhwloc.so.15 not loaded"), std::string::npos)
      << missing.error;
  EXPECT_EQ(missing.hwloc_topology_init, nullptr);
  auto other = mainboard::host::load_libhwloc(MAINBOARD_TEST_LIB);
  EXPECT_FALSE(other);
  EXPECT_NE(other.error.find("lacks hwloc_get_api_version, hwloc_topology_init"), std::string::npos)
      << other.error;
}
