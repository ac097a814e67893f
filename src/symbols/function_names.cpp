// Auto-instrumented spans are recorded by address (the span library reads no debug information);
// this names them where the profile is read, from the module files the profile lists.
#include "symbols/function_names.hpp"

#include <charconv>
#include <map>

#include "symbols/symbolizer.hpp"

namespace mainboard::symbols {

void name_functions(Profile& p) {
  bool any = false;
  for (const auto& path : p.paths)
    if (path.find("@0x") != std::string::npos) any = true;
  if (!any || p.function_maps.empty()) return;
  std::string maps;
  for (const auto& line : p.function_maps)
    maps += line + "\n";
  Symbolizer symbolizer;
  symbolizer.set_mappings(parse_maps(maps));
  bool unnamed = false;
  std::map<std::string, std::string, std::less<>> names;
  auto resolve = [&](std::string_view component) -> std::string {
    if (component.rfind("@0x", 0) != 0) return std::string(component);
    if (auto it = names.find(component); it != names.end()) return it->second;
    std::uint64_t address = 0;
    auto digits = component.substr(3);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), address, 16);
    std::string name(component);
    if (ec == std::errc() && end == digits.data() + digits.size()) {
      const auto& frames = symbolizer.symbolize(address, false);
      // The outermost frame is the function itself; the others are inlined into it.
      if (!frames.empty() && frames.back().function.rfind("0x", 0) != 0)
        name = frames.back().function;
    }
    if (name == component) unnamed = true;
    return names.emplace(std::string(component), name).first->second;
  };
  for (std::size_t i = 0; i < p.paths.size(); ++i) {
    std::string named;
    std::size_t start = 0;
    const std::string& path = p.paths[i];
    for (;;) {
      auto slash = path.find('/', start);
      if (!named.empty()) named += "/";
      named += resolve(std::string_view(path).substr(
          start, slash == std::string::npos ? std::string::npos : slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    p.paths[i] = named;
    if (i < p.span_stats.size()) {
      p.span_stats[i].path = named;
      p.span_stats[i].name = resolve(p.span_stats[i].name);
    }
  }
  if (!unnamed) p.function_maps.clear();
}

}  // namespace mainboard::symbols
