#include "mainboard/arch_config.hpp"

#include <gtest/gtest.h>

using namespace mainboard;

namespace {

struct Tile {
  int m = 0, n = 0;
  bool operator==(const Tile&) const = default;
};

ArchConfig<Tile> tiles() {
  ArchConfig<Tile> t(Tile{64, 64});
  t.set("sm_90", {128, 256})
      .set("Ampere", {128, 128})
      .set("gfx942", {256, 256})
      .set("rdna3", {32, 32});
  return t;
}

}  // namespace

TEST(ArchConfig, ExactKeyWins) {
  auto t = tiles();
  EXPECT_EQ(t.lookup("sm_90"), (Tile{128, 256}));
  EXPECT_EQ(t.resolve("sm_90"), "sm_90");
  EXPECT_EQ(t.lookup("gfx942"), (Tile{256, 256}));
  EXPECT_EQ(t.lookup("SM_90"), (Tile{128, 256}));  // keys are case-insensitive
}

TEST(ArchConfig, ArchitectureSpecificSuffixFallsBackToTheBaseKey) {
  auto t = tiles();
  EXPECT_EQ(t.lookup("sm_90a"), (Tile{128, 256}));
  EXPECT_EQ(t.resolve("sm_90a"), "sm_90");
  t.set("sm_90a", {1, 1});
  EXPECT_EQ(t.lookup("sm_90a"), (Tile{1, 1}));  // an exact entry beats the base
}

TEST(ArchConfig, FamilyFromTheKey) {
  auto t = tiles();
  // sm_80 (A100) and sm_86 (GA10x) are both Ampere; sm_89 is Ada, not Ampere.
  EXPECT_EQ(t.lookup("sm_80"), (Tile{128, 128}));
  EXPECT_EQ(t.resolve("sm_86"), "ampere");
  EXPECT_EQ(t.resolve("sm_89"), "default");
  EXPECT_EQ(t.lookup("gfx1100"), (Tile{32, 32}));
  EXPECT_EQ(t.resolve("gfx1101"), "rdna3");
  EXPECT_EQ(arch_family("sm_120"), "blackwell");
  EXPECT_EQ(arch_family("sm_100f"), "blackwell");
  EXPECT_EQ(arch_family("gfx90a"), "cdna2");
  EXPECT_EQ(arch_family("sm_9"), "");    // malformed: too few digits
  EXPECT_EQ(arch_family("sm_990"), "");  // compute capability 99.0 is unknown
  EXPECT_EQ(arch_family(""), "");
  EXPECT_EQ(family_key("GCN 5 (Vega)"), "gcn5");
}

TEST(ArchConfig, DefaultWhenNothingMatches) {
  auto t = tiles();
  EXPECT_EQ(t.lookup("sm_75"), (Tile{64, 64}));
  EXPECT_EQ(t.lookup(""), (Tile{64, 64}));
  EXPECT_EQ(t.lookup("garbage"), (Tile{64, 64}));
  EXPECT_EQ(t.resolve("garbage"), "default");
  EXPECT_EQ(t.fallback(), (Tile{64, 64}));
}

TEST(ArchConfig, GpuLooksUpByKeyThenByItsArchitectureName) {
  auto t = tiles();
  GpuInfo h100;
  h100.arch_key = "sm_90";
  h100.architecture = "Hopper";
  EXPECT_EQ(t.lookup(h100), (Tile{128, 256}));
  GpuInfo apple;
  apple.arch_key = "apple-m3";
  apple.architecture = "Apple M3 Max";
  t.set("applem3max", {16, 16});
  EXPECT_EQ(t.lookup(apple), (Tile{16, 16}));
  EXPECT_EQ(t.resolve(apple), "applem3max");
  GpuInfo unknown;
  EXPECT_EQ(t.resolve(unknown), "default");
}
