#include <gtest/gtest.h>

#include "core/text.hpp"

using namespace mainboard::core;

TEST(Text, TrimAndSplit) {
  EXPECT_EQ(trim("  a b \t\n"), "a b");
  EXPECT_EQ(trim(""), "");
  auto parts = split("a,,b", ',');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
  EXPECT_EQ(split_ws("  x \t y  ").size(), 2u);
  EXPECT_EQ(split_lines("a\r\nb\n").size(), 2u);
  EXPECT_EQ(split_lines("a\r\nb\n")[0], "a");
}

TEST(Text, IntegersRejectJunkAndOverflow) {
  EXPECT_EQ(parse_u64(" 42\n"), 42u);
  EXPECT_FALSE(parse_u64("42abc"));
  EXPECT_FALSE(parse_u64("-1"));
  EXPECT_FALSE(parse_u64(""));
  EXPECT_FALSE(parse_u64("18446744073709551616"));  // 2^64
  EXPECT_EQ(parse_u64("18446744073709551615"), 18446744073709551615ull);
  EXPECT_EQ(parse_u64_base("0xd4f", 16), 0xd4fu);
  EXPECT_EQ(parse_i64("-5"), -5);
  EXPECT_FALSE(parse_double("nan"));
  EXPECT_FALSE(parse_double("1e999"));
  EXPECT_DOUBLE_EQ(*parse_double("2596.142"), 2596.142);
}

TEST(Text, ShellQuotingReadsBackAsTheSameArguments) {
  EXPECT_EQ(shell_quote("-DCMAKE_C_COMPILER=/usr/bin/gcc"), "-DCMAKE_C_COMPILER=/usr/bin/gcc");
  EXPECT_EQ(shell_quote("-DCMAKE_CUDA_ARCHITECTURES=90;89"), "'-DCMAKE_CUDA_ARCHITECTURES=90;89'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quote(std::vector<std::string>{"python3", "-c", "print(1)"}),
            "python3 -c 'print(1)'");
}

TEST(Text, KeyValues) {
  std::string text = "MemTotal:  100 kB\nnocolon\nMemFree: 5 kB\n";
  EXPECT_EQ(find_value(text, "MemFree"), "5 kB");
  EXPECT_FALSE(find_value(text, "Missing"));
  EXPECT_EQ(parse_key_values(text).size(), 2u);
}

TEST(Text, CpuListsAreBoundedAgainstHostileRanges) {
  EXPECT_EQ(*parse_cpu_list("0-3,8,10-11"), (std::vector<std::uint32_t>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_TRUE(parse_cpu_list("")->empty());
  EXPECT_FALSE(parse_cpu_list("0-4294967295"));  // would allocate 16 GiB if trusted
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a-b"));
}

TEST(Text, Sizes) {
  EXPECT_EQ(parse_size("32K"), 32u * 1024);
  EXPECT_EQ(parse_size("1024 kB"), 1024u * 1024);
  EXPECT_EQ(parse_size("16 GB"), 16ull << 30);
  EXPECT_EQ(parse_size("512"), 512u);
  EXPECT_FALSE(parse_size("No Module Installed"));
  EXPECT_FALSE(parse_size("12 parsecs"));
  EXPECT_FALSE(parse_size("99999999999999999 TB"));  // overflows 64 bits
}

TEST(Text, InvalidUtf8BecomesReplacementCharacters) {
  // Valid text is unchanged, in every sequence length.
  for (std::string ok : {"", "plain", "caf\xC3\xA9", "\xE2\x80\xA6", "\xF0\x9F\x94\xA5"}) {
    EXPECT_TRUE(is_valid_utf8(ok)) << ok;
    EXPECT_EQ(valid_utf8(ok), ok);
  }
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  EXPECT_EQ(valid_utf8("a\xFF"
                       "b"),
            "a" + r + "b");                                  // never valid
  EXPECT_EQ(valid_utf8("caf\xE9"), "caf" + r);               // Latin-1
  EXPECT_EQ(valid_utf8("\xC3"), r);                          // truncated
  EXPECT_EQ(valid_utf8("\xC0\xAF"), r + r);                  // overlong
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), r + r + r);          // a surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\x80"));
  std::string garbage;
  for (int i = 0; i < 4096; ++i)
    garbage += static_cast<char>((i * 7919) & 0xFF);
  EXPECT_TRUE(is_valid_utf8(valid_utf8(garbage)));
}

TEST(Text, TerminalTextEscapesControlCharacters) {
  // Text a terminal only shows comes back unchanged: printable ASCII, line feeds, tabs, UTF-8.
  for (std::string ok : {"", "plain text\n\tindented", "caf\xC3\xA9 \xE2\x80\xA6 \xF0\x9F\x94\xA5",
                         "\xC2\xA0no-break space (U+00A0)"})
    EXPECT_EQ(terminal_text(ok), ok);
  // OSC 52 (writes the clipboard), OSC 0 (the window title), a colour, a bell, a carriage
  // return that would overwrite a line: shown, not obeyed.
  EXPECT_EQ(terminal_text("\x1b]52;c;aGk=\x07\x1b[31mred"), "\\x1b]52;c;aGk=\\x07\\x1b[31mred");
  EXPECT_EQ(terminal_text("a\rb\x7f\x01"), "a\\x0db\\x7f\\x01");
  // C1 controls as UTF-8 (U+009B is CSI on many terminals), and bytes that are not UTF-8.
  EXPECT_EQ(terminal_text("x\xC2\x9B"
                          "31m"),
            "x\\u009b31m");
  EXPECT_EQ(terminal_text("\xC2\x85\xC2\x9F"), "\\u0085\\u009f");
  EXPECT_EQ(terminal_text("caf\xE9 \xFF"), "caf\\xe9 \\xff");
  EXPECT_EQ(terminal_text("\x9B"), "\\x9b");  // a raw C1 byte is not UTF-8 either
  // With colour on, colour sequences pass and nothing else does.
  EXPECT_EQ(terminal_text("\x1b[1;36mlabel\x1b[0m", true), "\x1b[1;36mlabel\x1b[0m");
  EXPECT_EQ(terminal_text("\x1b[2J\x1b]0;t\x07\x1b[31m", true), "\\x1b[2J\\x1b]0;t\\x07\x1b[31m");
  EXPECT_EQ(terminal_text("\x1b[", true), "\\x1b[");  // cut short
  // Whatever the bytes, nothing below 0x20 but line feed and tab comes out, nor DEL.
  std::string garbage;
  for (int i = 0; i < 4096; ++i)
    garbage += static_cast<char>((i * 7919) & 0xFF);
  for (char c : terminal_text(garbage))
    EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 ? c != 0x7f : (c == '\n' || c == '\t'));
  EXPECT_TRUE(is_valid_utf8(terminal_text(garbage)));
}
