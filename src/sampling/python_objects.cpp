// Python objects of another process, read as PythonReader reads frames: modules, dictionaries
// (combined and split, 3.9 to 3.13), instance attributes (a __dict__, 3.11's and 3.12's managed
// dictionaries, 3.13's inline values), sets, weak references and ints. Thread names
// (threading._active) and asyncio tasks (their coroutine chains) are read with them.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "sampling/python_frames.hpp"
#include "sampling/python_layout.hpp"

namespace mainboard::sampling {

namespace {

constexpr std::uint64_t kMaxEntries = 1 << 17;  // a dictionary or set larger is not read
constexpr int kMaxAwaitDepth = 256;
constexpr std::uint64_t kHeapType = 1UL << 9;  // Py_TPFLAGS_HEAPTYPE, the same in 3.9 to 3.13

std::int64_t i64_in(const unsigned char* block, long offset) {
  std::int64_t v = 0;
  std::memcpy(&v, block + offset, sizeof v);
  return v;
}

}  // namespace

std::uint64_t PythonReader::u64_at(std::uint64_t address) const {
  std::uint64_t v = 0;
  return read_value(address, v) ? v : 0;
}

std::uint64_t PythonReader::type_of(std::uint64_t object) const {
  return object ? u64_at(object + static_cast<std::uint64_t>(layout_->object_type)) : 0;
}

const PythonReader::TypeInfo* PythonReader::type_info(std::uint64_t type) {
  if (!type) return nullptr;
  if (auto it = types_.find(type); it != types_.end()) return &it->second;
  const auto& L = *layout_;
  TypeInfo t;
  std::uint64_t name = u64_at(type + static_cast<std::uint64_t>(L.type_name));
  char buffer[64] = {};
  if (!name || !read_memory(name, buffer, sizeof buffer - 1)) {
    // A name near the end of a mapping: read it a byte at a time.
    for (std::size_t i = 0; name && i + 1 < sizeof buffer; ++i)
      if (!read_value(name + i, buffer[i]) || !buffer[i]) break;
  }
  t.name.assign(buffer, strnlen(buffer, sizeof buffer - 1));
  if (t.name.empty()) return nullptr;
  std::int64_t v = 0;
  if (!read_value(type + static_cast<std::uint64_t>(L.type_flags), t.flags) ||
      !read_value(type + static_cast<std::uint64_t>(L.type_basicsize), t.basicsize) ||
      !read_value(type + static_cast<std::uint64_t>(L.type_dictoffset), v))
    return nullptr;
  t.dictoffset = v;
  t.base = u64_at(type + static_cast<std::uint64_t>(L.type_base));
  if (t.flags & kHeapType)
    t.cached_keys = u64_at(type + static_cast<std::uint64_t>(L.heaptype_cached_keys));
  // Types do not move and are not freed while instances live: kept by address. (A heap type
  // may be freed and its address reused; the few read here — Thread, WeakSet, Task — are not.)
  return &types_.emplace(type, std::move(t)).first->second;
}

bool PythonReader::is_instance(std::uint64_t object, const std::string& type_name) {
  std::uint64_t type = type_of(object);
  for (int depth = 0; type && depth < 16; ++depth) {
    const TypeInfo* t = type_info(type);
    if (!t) return false;
    if (t->name == type_name) return true;
    type = t->base;
  }
  return false;
}

bool PythonReader::keys_slots(std::uint64_t keys,
                              std::vector<std::pair<std::uint64_t, std::uint64_t>>& out) const {
  const auto& L = *layout_;
  out.clear();
  unsigned char head[64];
  if (!keys || L.keys_indices > static_cast<long>(sizeof head) ||
      !read_memory(keys, head, static_cast<std::size_t>(L.keys_indices)))
    return false;
  std::int64_t nentries = i64_in(head, L.keys_nentries);
  std::uint64_t index_bytes = 0, entry_size = 24, key_at = 8;
  if (L.keys_index_bytes < 0) {
    // 3.9, 3.10: dk_size slots of 1, 2, 4 or 8 bytes each; entries of (hash, key, value).
    std::int64_t size = i64_in(head, L.keys_size);
    if (size <= 0 || size > static_cast<std::int64_t>(kMaxEntries) * 2) return false;
    auto width = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
    index_bytes = static_cast<std::uint64_t>(size) * static_cast<std::uint64_t>(width);
  } else {
    // 3.11 on: 2^dk_log2_index_bytes bytes of indices; entries of (key, value) when every key
    // is a string (dk_kind ≠ 0), else (hash, key, value).
    unsigned log2_index = head[L.keys_index_bytes];
    if (log2_index > 40) return false;
    index_bytes = std::uint64_t{1} << log2_index;
    if (head[L.keys_kind] != 0) {
      entry_size = 16;
      key_at = 0;
    }
  }
  if (nentries < 0 || static_cast<std::uint64_t>(nentries) > kMaxEntries) return false;
  auto n = static_cast<std::size_t>(nentries);
  std::vector<unsigned char> entries(n * entry_size);
  if (n && !read_memory(keys + static_cast<std::uint64_t>(L.keys_indices) + index_bytes,
                        entries.data(), entries.size()))
    return false;
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(&out[i].first, entries.data() + i * entry_size + key_at, 8);
    std::memcpy(&out[i].second, entries.data() + i * entry_size + key_at + 8, 8);
  }
  return true;
}

bool PythonReader::keys_entries(std::uint64_t keys, std::uint64_t values,
                                std::vector<std::pair<std::uint64_t, std::uint64_t>>& out) const {
  const auto& L = *layout_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> slots;
  out.clear();
  if (!keys_slots(keys, slots)) return false;
  std::vector<std::uint64_t> split(values ? slots.size() : 0);
  std::uint64_t array = values + static_cast<std::uint64_t>(L.values_array);
  if (!split.empty() && !read_memory(array, split.data(), split.size() * 8)) {
    // The array may hold fewer values than the shared keys have entries: one at a time.
    for (std::size_t i = 0; i < split.size(); ++i)
      split[i] = u64_at(array + 8 * i);
  }
  for (std::size_t i = 0; i < slots.size(); ++i) {
    std::uint64_t value = values ? split[i] : slots[i].second;
    if (slots[i].first && value) out.emplace_back(slots[i].first, value);  // else deleted
  }
  return true;
}

long PythonReader::keys_find(std::uint64_t keys, std::string_view name) const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> slots;
  if (!keys_slots(keys, slots)) return -1;
  std::string key;
  for (std::size_t i = 0; i < slots.size(); ++i)
    if (slots[i].first && read_string(slots[i].first, key) && key == name)
      return static_cast<long>(i);
  return -1;
}

bool PythonReader::dict_items(std::uint64_t dict,
                              std::vector<std::pair<std::uint64_t, std::uint64_t>>& out) {
  const auto& L = *layout_;
  if (!is_instance(dict, "dict")) return false;
  std::uint64_t keys = u64_at(dict + static_cast<std::uint64_t>(L.dict_keys));
  std::uint64_t values = u64_at(dict + static_cast<std::uint64_t>(L.dict_values));
  return keys_entries(keys, values, out);  // 3.9, 3.10: ma_values is the array itself
}

std::uint64_t PythonReader::dict_get(std::uint64_t dict, std::string_view key) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> items;
  if (!dict_items(dict, items)) return 0;
  std::string k;
  for (const auto& [kp, v] : items)
    if (read_string(kp, k) && k == key) return v;
  return 0;
}

std::uint64_t PythonReader::attribute(std::uint64_t object, std::string_view name) {
  const auto& L = *layout_;
  const TypeInfo* t = type_info(type_of(object));
  if (!t) return 0;
  auto split_value = [&](std::uint64_t values) -> std::uint64_t {
    long i = keys_find(t->cached_keys, name);
    return i < 0 ? 0
                 : u64_at(values + static_cast<std::uint64_t>(L.values_array) +
                          8 * static_cast<std::uint64_t>(i));
  };
  std::uint64_t dict = 0;
  if (L.flag_inline_values && (t->flags & static_cast<std::uint64_t>(L.flag_inline_values))) {
    // 3.13: the values right after the object, while they are valid; else a dictionary.
    std::uint64_t values = object + static_cast<std::uint64_t>(t->basicsize);
    std::uint8_t valid = 0;
    if (read_value(values + static_cast<std::uint64_t>(L.values_valid), valid) && valid)
      return split_value(values);
    dict = u64_at(object - 3 * 8);
  } else if (L.flag_managed_dict && (t->flags & static_cast<std::uint64_t>(L.flag_managed_dict))) {
    if (L.version == 0x030b) {
      // 3.11: the values pointer four words before the object, the dictionary three.
      if (std::uint64_t values = u64_at(object - 4 * 8)) return split_value(values);
      dict = u64_at(object - 3 * 8);
    } else {
      // 3.12: one word three before the object, the values' address less one when its low bit
      // is set, else the dictionary; 3.13: the dictionary there.
      std::uint64_t word = u64_at(object - 3 * 8);
      if (L.version == 0x030c && (word & 1)) return split_value(word + 1);
      dict = word;
    }
  } else if (t->dictoffset > 0) {
    dict = u64_at(object + static_cast<std::uint64_t>(t->dictoffset));
  }
  return dict ? dict_get(dict, name) : 0;
}

bool PythonReader::set_items(std::uint64_t set, std::vector<std::uint64_t>& out) const {
  const auto& L = *layout_;
  out.clear();
  std::int64_t mask = 0;
  std::uint64_t table = u64_at(set + static_cast<std::uint64_t>(L.set_table));
  if (!table || !read_value(set + static_cast<std::uint64_t>(L.set_mask), mask) || mask < 0 ||
      static_cast<std::uint64_t>(mask) >= kMaxEntries * 4)
    return false;
  auto slots = static_cast<std::size_t>(mask) + 1;
  auto size = static_cast<std::size_t>(L.set_entry_size);
  std::vector<unsigned char> block(slots * size);
  if (!read_memory(table, block.data(), block.size())) return false;
  for (std::size_t i = 0; i < slots; ++i) {
    std::uint64_t key = 0;
    std::memcpy(&key, block.data() + i * size, 8);
    if (key) out.push_back(key);  // the caller checks types: a deleted slot holds a dummy
  }
  return true;
}

bool PythonReader::list_items(std::uint64_t list, std::vector<std::uint64_t>& out) const {
  const auto& L = *layout_;
  out.clear();
  std::int64_t size = 0;
  if (!read_value(list + static_cast<std::uint64_t>(L.varobject_size), size) || size < 0 ||
      static_cast<std::uint64_t>(size) > kMaxEntries)
    return false;
  std::uint64_t items = u64_at(list + static_cast<std::uint64_t>(L.list_items));
  out.resize(static_cast<std::size_t>(size));
  return size == 0 || (items && read_memory(items, out.data(), out.size() * 8));
}

bool PythonReader::read_int(std::uint64_t object, std::uint64_t& value, bool& negative) const {
  const auto& L = *layout_;
  std::int64_t size = 0;
  if (!read_value(object + static_cast<std::uint64_t>(L.long_size), size)) return false;
  std::uint64_t digits = 0;
  if (L.long_tagged) {
    // 3.12 on: the digit count above three bits of sign (0 positive, 1 zero, 2 negative).
    auto tag = static_cast<std::uint64_t>(size);
    negative = (tag & 3) == 2;
    digits = (tag & 3) == 1 ? 0 : tag >> 3;
  } else {
    negative = size < 0;
    digits = static_cast<std::uint64_t>(size < 0 ? -size : size);
  }
  if (digits > 3) return false;  // more than 64 bits
  std::uint32_t d[3] = {};
  if (digits && !read_memory(object + static_cast<std::uint64_t>(L.long_digits), d, digits * 4))
    return false;
  value = 0;
  for (std::uint64_t i = digits; i-- > 0;)
    value = (value << 30) | (d[i] & 0x3FFFFFFF);
  return true;
}

std::string PythonReader::int_text(std::uint64_t object) const {
  const auto& L = *layout_;
  std::int64_t size = 0;
  if (!read_value(object + static_cast<std::uint64_t>(L.long_size), size)) return "";
  bool negative = false;
  std::uint64_t n = 0;
  if (L.long_tagged) {
    auto tag = static_cast<std::uint64_t>(size);
    negative = (tag & 3) == 2;
    n = (tag & 3) == 1 ? 0 : tag >> 3;
  } else {
    negative = size < 0;
    n = static_cast<std::uint64_t>(size < 0 ? -size : size);
  }
  // 30-bit digits, least significant first; 2 000 of them (about 18 000 decimal digits) at most.
  constexpr std::uint64_t kMaxDigits = 2000;
  if (n > kMaxDigits) return fmt::format("{}int of {} bits", negative ? "-" : "", n * 30);
  std::vector<std::uint32_t> digits(n);
  if (n && !read_memory(object + static_cast<std::uint64_t>(L.long_digits), digits.data(), n * 4))
    return "";
  for (auto& d : digits)
    d &= 0x3FFFFFFF;
  // Base 2^30 to base 10^9 by repeated division.
  std::vector<std::uint32_t> parts;  // base 10^9, least significant first
  while (!digits.empty()) {
    std::uint64_t rest = 0;
    for (std::size_t i = digits.size(); i-- > 0;) {
      std::uint64_t cur = (rest << 30) | digits[i];
      digits[i] = static_cast<std::uint32_t>(cur / 1'000'000'000);
      rest = cur % 1'000'000'000;
    }
    parts.push_back(static_cast<std::uint32_t>(rest));
    while (!digits.empty() && digits.back() == 0)
      digits.pop_back();
  }
  if (parts.empty()) parts.push_back(0);
  std::string text = std::to_string(parts.back());
  for (std::size_t i = parts.size() - 1; i-- > 0;)
    text += fmt::format("{:09d}", parts[i]);
  constexpr std::size_t kShown = 100;
  if (text.size() > kShown)
    text = text.substr(0, kShown) + fmt::format("\u2026 ({} digits)", text.size());
  return (negative ? "-" : "") + text;
}

bool PythonReader::tuple_items(std::uint64_t tuple, std::vector<std::uint64_t>& out) const {
  const auto& L = *layout_;
  out.clear();
  std::int64_t size = 0;
  if (!tuple || !read_value(tuple + static_cast<std::uint64_t>(L.varobject_size), size) ||
      size < 0 || static_cast<std::uint64_t>(size) > kMaxEntries)
    return false;
  out.resize(static_cast<std::size_t>(size));
  return size == 0 ||
         read_memory(tuple + static_cast<std::uint64_t>(L.tuple_items), out.data(), out.size() * 8);
}

namespace {

/// A str or bytes value as Python writes it: quoted, escaped, cut past `shown` characters with
/// its length said.
std::string quoted(const std::string& text, bool bytes, std::size_t length) {
  constexpr std::size_t kShown = 60;
  std::string out = bytes ? "b'" : "'";
  std::size_t n = 0;
  for (std::size_t i = 0; i < text.size() && n < kShown; ++n) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f || (bytes && c >= 0x80)) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c >= 0x80) {  // one UTF-8 character, whole
      std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      out += text.substr(i, len);
      i += len;
      continue;
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  out += '\'';
  if (length > n) out += fmt::format("\u2026 (len {})", length);
  return out;
}

}  // namespace

std::string PythonReader::repr(std::uint64_t object, int depth) {
  const auto& L = *layout_;
  constexpr int kMaxDepth = 3;
  constexpr std::size_t kMaxItems = 10;
  std::uint64_t type = type_of(object);
  const TypeInfo* t = type_info(type);
  if (!t) return fmt::format("? at 0x{:x}", object);
  const std::string& name = t->name;
  auto elsewhere = [&] { return fmt::format("{} at 0x{:x}", name, object); };
  if (name == "NoneType") return "None";
  if (name == "bool") {
    std::uint64_t v = 0;
    bool negative = false;
    return read_int(object, v, negative) ? (v ? "True" : "False") : elsewhere();
  }
  if (name == "int") {
    auto text = int_text(object);
    return text.empty() ? elsewhere() : text;
  }
  if (name == "float") {
    double v = 0;
    if (!read_value(object + static_cast<std::uint64_t>(L.float_value), v)) return elsewhere();
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    auto text = fmt::format("{}", v);  // the shortest that reads back, as repr()
    if (text.find_first_of(".en") == std::string::npos) text += ".0";
    return text;
  }
  if (name == "str") {
    std::string text;
    std::int64_t length = 0;
    if (!read_string(object, text) ||
        !read_value(object + static_cast<std::uint64_t>(L.unicode_length), length))
      return elsewhere();
    return quoted(text, false, static_cast<std::size_t>(std::max<std::int64_t>(length, 0)));
  }
  if (name == "bytes") {
    std::int64_t length = 0;
    if (!read_value(object + static_cast<std::uint64_t>(L.varobject_size), length) || length < 0)
      return elsewhere();
    std::string data(static_cast<std::size_t>(std::min<std::int64_t>(length, 64)), '\0');
    if (!data.empty() &&
        !read_memory(object + static_cast<std::uint64_t>(L.bytes_data), data.data(), data.size()))
      return elsewhere();
    return quoted(data, true, static_cast<std::size_t>(length));
  }
  bool tuple = name == "tuple", list = name == "list", dict = name == "dict";
  if (!tuple && !list && !dict) return elsewhere();
  const char* open = tuple ? "(" : list ? "[" : "{";
  const char* close = tuple ? ")" : list ? "]" : "}";
  std::size_t length = 0;
  std::string out = open;
  if (dict) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> items;
    if (!dict_items(object, items)) return elsewhere();
    length = items.size();
    if (depth >= kMaxDepth && length) return fmt::format("{{…}} (len {})", length);
    for (std::size_t i = 0; i < items.size() && i < kMaxItems; ++i)
      out += (i ? ", " : "") + repr(items[i].first, depth + 1) + ": " +
             repr(items[i].second, depth + 1);
  } else {
    std::vector<std::uint64_t> items;
    if (!(tuple ? tuple_items(object, items) : list_items(object, items))) return elsewhere();
    length = items.size();
    if (depth >= kMaxDepth && length) return fmt::format("{}…{} (len {})", open, close, length);
    for (std::size_t i = 0; i < items.size() && i < kMaxItems; ++i)
      out += (i ? ", " : "") + repr(items[i], depth + 1);
    if (tuple && length == 1) out += ",";
  }
  if (length > kMaxItems) out += ", …";
  out += close;
  if (length > kMaxItems) out += fmt::format(" (len {})", length);
  return out;
}

bool PythonReader::locals(std::uint64_t frame, std::vector<PyLocal>& out) {
  const auto& L = *layout_;
  out.clear();
  constexpr std::uint32_t kVarargs = 0x04, kVarkeywords = 0x08;   // CO_VARARGS, CO_VARKEYWORDS
  constexpr unsigned kCell = 0x40, kFree = 0x80, kHidden = 0x10;  // CO_FAST_* (3.11 on)
  std::uint64_t code = u64_at(frame + static_cast<std::uint64_t>(L.frame_code));
  if (!code || (code_type_ && type_of(code) != code_type_)) return false;
  auto i32 = [&](long offset) {
    std::int32_t v = 0;
    read_value(code + static_cast<std::uint64_t>(offset), v);
    return v;
  };
  std::int32_t args = i32(L.code_argcount) + i32(L.code_kwonlyargcount);
  auto flags = static_cast<std::uint32_t>(i32(L.code_flags));
  args += (flags & kVarargs ? 1 : 0) + (flags & kVarkeywords ? 1 : 0);
  // The names of the slots, and of each whether it holds a cell.
  std::vector<std::uint64_t> names;
  std::vector<bool> cells;
  std::vector<unsigned char> kinds;
  if (L.code_localspluskinds >= 0) {
    if (!tuple_items(u64_at(code + static_cast<std::uint64_t>(L.code_varnames)), names))
      return false;
    std::string k;
    if (!read_bytes_object(u64_at(code + static_cast<std::uint64_t>(L.code_localspluskinds)), k) ||
        k.size() != names.size())
      return false;
    kinds.assign(k.begin(), k.end());
    for (auto kind : kinds)
      cells.push_back(kind & (kCell | kFree));
  } else {
    if (!tuple_items(u64_at(code + static_cast<std::uint64_t>(L.code_varnames)), names))
      return false;
    std::int32_t nlocals = i32(L.code_nlocals);
    if (nlocals < 0 || static_cast<std::size_t>(nlocals) != names.size()) return false;
    cells.assign(names.size(), false);
    for (long field : {L.code_cellvars, L.code_freevars}) {
      std::vector<std::uint64_t> more;
      if (!tuple_items(u64_at(code + static_cast<std::uint64_t>(field)), more)) return false;
      names.insert(names.end(), more.begin(), more.end());
      cells.resize(names.size(), true);
    }
  }
  if (names.size() > 1 << 16) return false;
  std::vector<std::uint64_t> values(names.size());
  if (!values.empty() && !read_memory(frame + static_cast<std::uint64_t>(L.frame_localsplus),
                                      values.data(), values.size() * 8))
    return false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!kinds.empty() && (kinds[i] & kHidden)) continue;  // a comprehension's, inlined
    std::uint64_t value = values[i];
    // A cell (a variable an inner function uses): its value is in it, once it is made.
    if (value && cells[i] && is_instance(value, "cell"))
      value = u64_at(value + static_cast<std::uint64_t>(L.cell_ref));
    if (!value) continue;  // not bound yet
    PyLocal local;
    if (!read_string(names[i], local.name)) continue;
    local.argument = static_cast<std::int32_t>(i) < args;
    local.address = value;
    local.repr = repr(value);
    out.push_back(std::move(local));
  }
  return true;
}

std::uint64_t PythonReader::module_dict(std::string_view name) {
  const auto& L = *layout_;
  std::uint64_t interp = u64_at(runtime_ + static_cast<std::uint64_t>(L.runtime_interpreters_head));
  // The main interpreter is the last of the list (each new one goes in front).
  for (int i = 0; i < 64; ++i) {
    std::uint64_t next = interp ? u64_at(interp + static_cast<std::uint64_t>(L.interp_next)) : 0;
    if (!next) break;
    interp = next;
  }
  if (!interp) return 0;
  std::uint64_t modules = u64_at(interp + static_cast<std::uint64_t>(L.interp_modules));
  std::uint64_t module = modules ? dict_get(modules, name) : 0;
  if (!module || !is_instance(module, "module")) return 0;
  return u64_at(module + static_cast<std::uint64_t>(L.module_dict));
}

std::map<std::uint64_t, std::string> PythonReader::thread_names() {
  std::map<std::uint64_t, std::string> names;
  std::uint64_t threading = module_dict("threading");
  std::uint64_t active = threading ? dict_get(threading, "_active") : 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> items;
  if (!active || !dict_items(active, items)) return names;
  std::string name;
  for (const auto& [key, thread] : items) {
    std::uint64_t ident = 0;
    bool negative = false;
    if (!is_instance(key, "int") || !read_int(key, ident, negative) || negative) continue;
    std::uint64_t value = attribute(thread, "_name");
    if (value && read_string(value, name)) names[ident] = name;
  }
  return names;
}

bool PythonReader::frame_of(std::uint64_t frame, PyFrame& out) {
  const auto& L = *layout_;
  std::uint64_t code = u64_at(frame + static_cast<std::uint64_t>(L.frame_code));
  std::uint64_t instr = u64_at(frame + static_cast<std::uint64_t>(L.frame_instr));
  const std::size_t code_size = code_header_size(L);
  std::vector<unsigned char> header(code_size);
  if (!code || !read_memory(code, header.data(), code_size)) return false;
  std::uint32_t index = 0;
  const std::string* linetable = nullptr;
  if (!code_at(code, header.data(), index, linetable)) return false;
  std::uint64_t first = code + static_cast<std::uint64_t>(L.code_adaptive);
  std::int64_t instruction = instr >= first ? static_cast<std::int64_t>((instr - first) / 2) : -1;
  out.code = index;
  out.line = line_of(index, *linetable, instruction);
  out.entry = false;
  return true;
}

bool PythonReader::tasks(const std::vector<PyThreadStack>& threads, std::vector<PyTask>& out,
                         std::string& why) {
  const auto& L = *layout_;
  out.clear();
  if (L.task_coro < 0 || L.gen_frame < 0) {
    why = "async: the asyncio tasks of CPython " + version_ +
          " cannot be read (3.11 to 3.13 with asyncio's C tasks can)";
    return false;
  }
  std::uint64_t module = module_dict("asyncio.tasks");
  if (!module) return true;  // asyncio not imported: no tasks
  // Every task: asyncio.tasks._all_tasks (3.11) or _scheduled_tasks (3.12 on), weak sets, and
  // _eager_tasks (3.12 on), a set.
  std::vector<std::uint64_t> candidates, items;
  for (const char* name : {"_all_tasks", "_scheduled_tasks", "_eager_tasks"}) {
    std::uint64_t holder = dict_get(module, name);
    if (!holder) continue;
    if (is_instance(holder, "set")) {
      if (set_items(holder, items)) candidates.insert(candidates.end(), items.begin(), items.end());
      continue;
    }
    std::uint64_t data = attribute(holder, "data");  // a WeakSet's set of weak references
    if (!data || !set_items(data, items)) continue;
    for (auto ref : items)
      if (is_instance(ref, "weakref.ReferenceType") || is_instance(ref, "weakref"))
        candidates.push_back(u64_at(ref + static_cast<std::uint64_t>(L.weakref_object)));
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::map<std::uint64_t, std::uint32_t> index;
  for (auto task : candidates) {
    if (!task || !is_instance(task, "_asyncio.Task")) continue;  // a dead reference: None
    PyTask t;
    t.address = task;
    std::uint64_t coro = u64_at(task + static_cast<std::uint64_t>(L.task_coro));
    std::uint64_t name = u64_at(task + static_cast<std::uint64_t>(L.task_name));
    t.waiter = u64_at(task + static_cast<std::uint64_t>(L.task_waiter));
    std::uint64_t number = 0;
    bool negative = false;
    if (is_instance(name, "str")) {
      read_string(name, t.name);
    } else if (is_instance(name, "int") && read_int(name, number, negative)) {
      t.name = "Task-" + std::to_string(number);  // 3.13 names a task only when asked
    }
    // The chain: the task's coroutine, the coroutine it awaits, and so on, outermost first.
    std::vector<PyFrame> chain;
    std::uint64_t running_frame = 0;
    for (int depth = 0; coro && depth < kMaxAwaitDepth; ++depth) {
      if (!is_instance(coro, "coroutine") && !is_instance(coro, "generator")) break;
      std::int8_t state = 0;
      if (!read_value(coro + static_cast<std::uint64_t>(L.gen_frame_state), state)) break;
      std::uint64_t frame = coro + static_cast<std::uint64_t>(L.gen_frame);
      if (state == L.state_executing) {
        running_frame = frame;
        break;
      }
      PyFrame f;
      if (state > L.state_executing || !frame_of(frame, f)) break;  // finished
      chain.push_back(f);
      if (state != L.state_awaiting) break;
      std::int32_t top = 0;
      if (!read_value(frame + static_cast<std::uint64_t>(L.frame_stacktop), top) || top <= 0 ||
          top > (1 << 20))
        break;
      coro = u64_at(frame + static_cast<std::uint64_t>(L.frame_localsplus) +
                    8 * static_cast<std::uint64_t>(top - 1));
    }
    if (running_frame) {
      // Running: the thread whose stack holds the coroutine's frame has the rest.
      for (const auto& th : threads) {
        auto at = std::find(th.frame_addresses.begin(), th.frame_addresses.end(), running_frame);
        if (at == th.frame_addresses.end()) continue;
        t.tid = th.tid;
        auto n = static_cast<std::size_t>(at - th.frame_addresses.begin()) + 1;
        t.frames.assign(th.frames.begin(), th.frames.begin() + static_cast<long>(n));
        for (auto& f : t.frames)
          f.entry = false;
        break;
      }
    }
    t.frames.insert(t.frames.end(), chain.rbegin(), chain.rend());
    index[task] = static_cast<std::uint32_t>(out.size());
    out.push_back(std::move(t));
  }
  // Who waits for whom: a task's waiter is the task it awaits, or gather's future, whose
  // children it awaits.
  std::vector<std::uint64_t> children;
  for (std::uint32_t i = 0; i < out.size(); ++i) {
    std::uint64_t waiter = out[i].waiter;
    if (!waiter) continue;
    if (auto it = index.find(waiter); it != index.end()) {
      out[it->second].awaited_by.push_back(i);
      continue;
    }
    std::uint64_t list = attribute(waiter, "_children");
    if (list && is_instance(list, "list") && list_items(list, children)) {
      out[i].waiting_for = "gather";
      for (auto c : children)
        if (auto it = index.find(c); it != index.end()) out[it->second].awaited_by.push_back(i);
    } else {
      out[i].waiting_for = "a future";
    }
  }
  return true;
}

}  // namespace mainboard::sampling
