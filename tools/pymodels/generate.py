#!/usr/bin/env python3
"""Typed fields for the Python models, from the C++ field lists that write their JSON.

Every model's JSON is written and read through one list per C++ struct (`fields(v, m)`:
`v("total_bytes", m.total_bytes); …`) in src/. This reads those lists and the structs' member
types in include/mainboard/, and writes, inside each Python model class of python/mainboard/,
a block of annotations between two marker comments:

    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit
    total_bytes: int
    used_bytes: int | None
    # end of fields

so that a field is a typed attribute (an IDE completes it, mypy checks it, get_type_hints
reads it) and a field added in C++ cannot be forgotten in Python. The values still come from
the document at run time (the annotations create no attributes).

    generate.py          rewrites the blocks
    generate.py --check  exit 1, naming each class, when a block is out of date
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "mainboard"
BEGIN = "    # fields: generated from the C++ field list by tools/pymodels/generate.py; do not edit"
END = "    # end of fields"

#: Python model classes whose C++ struct has another name, and how the Python model reshapes
#: the document: fields it drops (a flattened `telemetry`) and types it changes (a reading the
#: reference reads as 0 where unavailable is never None).
SPECIAL = {
    "GPUSnapshot": {"struct": "GpuSnapshot", "drop": {"telemetry"},
                    "types": {"fan_speed_pct": "float", "pcie": "PcieReading"}},
    "NPUSnapshot": {"struct": "NpuSnapshot", "drop": {"telemetry"}, "types": {}},
}
#: C++ struct -> the Python class that models it, where the names differ.
PYTHON_NAME = {spec["struct"]: cls for cls, spec in SPECIAL.items()}
#: Python classes that read their document their own way (Profile: raw lists, loaded through
#: the library): not given generated fields.
SKIP = {"Profile"}
#: Readings the reference never gives as None: an unavailable one is the model with zero figures
#: and `supported` False (the reference documents `Memory.supported`), or Board's empty strings.
ALWAYS_MODEL = {"Memory", "Board"}
#: C++ enums: the document holds their names (a property of the class may give the enum).
ENUMS = {"XidSource", "UnitKind", "ToolCategory", "StorageTier", "ProbeStatus", "Bound", "Severity",
         "CallGraph", "Activity", "Feature", "MemoryKind", "MemorySource", "TopologySource",
         "CacheSource"}


def probe_members() -> list[str]:
    """The snapshot members of the host probe table (MAINBOARD_HOST_PROBES), each once, in order."""
    text = (ROOT / "include" / "mainboard" / "snapshot.hpp").read_text()
    table = text[text.index("#define MAINBOARD_HOST_PROBES(X)"):]
    table = table[:table.index("\n\n")]
    members: list[str] = []
    for row in re.findall(r"X\(([^)]*(?:\([^)]*\))?[^)]*)\)", table):
        member = split_args(row)[4]
        if member not in members:
            members.append(member)
    return members


def field_lists() -> dict[str, list[tuple[str, str]]]:
    """C++ struct -> [(JSON key, member name)], from every `fields(V& v, Struct& m)` (in src/,
    or beside the model in its public header); the probe table's rows where a list expands it."""
    out: dict[str, list[tuple[str, str]]] = {}
    pattern = re.compile(r"void fields\(V& v, ([A-Za-z_:]+)& m\)\s*\{(.*?)\n\}", re.S)
    paths = [*sorted((ROOT / "src").rglob("*.[ch]pp")),
             *sorted((ROOT / "include" / "mainboard").glob("*.hpp"))]
    for path in paths:
        for struct, body in pattern.findall(path.read_text()):
            name = struct.split("::")[-1]
            if "MAINBOARD_HOST_PROBES(" in body:
                before, after = body.split("MAINBOARD_HOST_PROBES(", 1)
                rows = [(m, m) for m in probe_members()]
                out[name] = [*re.findall(r'v\("([^"]+)",\s*m\.(\w+)\)', before), *rows,
                             *re.findall(r'v\("([^"]+)",\s*m\.(\w+)\)', after)]
            else:
                out[name] = re.findall(r'v\("([^"]+)",\s*m\.(\w+)\)', body)
    return out


def member_types() -> dict[str, dict[str, str]]:
    """C++ struct -> {member: C++ type}, from the public headers."""
    out: dict[str, dict[str, str]] = {}
    bases: dict[str, list[str]] = {}
    head = re.compile(
        r"^struct (?:MAINBOARD_API )?(\w+)(?: final)?(?:\s*:\s*((?:public )?\w+(?:, (?:public )?\w+)*))? \{$")
    member = re.compile(r"^\s{2}((?:const )?[\w:]+(?:<.*>)?)\s+(\w+)(?:\s*=\s*[^;]*|\{[^;]*\})?;")
    for path in sorted((ROOT / "include" / "mainboard").glob("*.hpp")):
        current = None
        depth = 0
        for line in path.read_text().splitlines():
            if current is None:
                match = head.match(line.strip()) if not line.startswith(" ") else None
                if match:
                    current, depth = match.group(1), 1
                    out.setdefault(current, {})
                    if match.group(2):  # its bases' members are this struct's too
                        bases[current] = [b.replace("public ", "").strip()
                                          for b in match.group(2).split(",")]
                continue
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                current = None
                continue
            if depth == 1:
                found = member.match(line)
                if found and "(" not in found.group(1):
                    out[current][found.group(2)] = found.group(1)
    for struct, names in bases.items():
        for base in names:
            for name, cpp in out.get(base, {}).items():
                out[struct].setdefault(name, cpp)
    return out


def split_args(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def python_type(cpp: str, classes: set[str]) -> str:
    cpp = cpp.replace("const ", "").strip()
    match = re.fullmatch(r"(?:std::)?(optional|vector|array|map|Reading)<(.*)>", cpp)
    if match:
        kind, args = match.group(1), split_args(match.group(2))
        if kind == "Reading" and args[0] in ALWAYS_MODEL:
            return python_type(args[0], classes)
        if kind in ("optional", "Reading"):  # a Reading not taken is None, its reason beside
            return f"{python_type(args[0], classes)} | None"
        if kind in ("vector", "array"):
            return f"tuple[{python_type(args[0], classes)}, ...]"
        return "FrozenModel"  # a JSON object of named values: a model of its keys
    if cpp in ("std::string", "std::string_view"):
        return "str"
    if cpp == "bool":
        return "bool"
    if cpp in ("double", "float"):
        return "float"
    if re.fullmatch(r"(std::)?u?int\d+_t|int|unsigned|long|std::size_t|size_t|pid_t", cpp):
        return "int"
    name = cpp.split("::")[-1]
    if name in ENUMS:
        return "str"
    name = PYTHON_NAME.get(name, name)
    if name in classes:
        return name
    return "FrozenModel"


def python_models() -> dict[str, Path]:
    """Python model class -> the file defining it."""
    out = {}
    for path in sorted(PACKAGE.glob("*.py")):
        for name in re.findall(r"^class (\w+)\((?:FrozenModel|UnitSnapshot|_ZeroReading|\w+Model)\):",
                               path.read_text(), re.M):
            if name not in SKIP:
                out[name] = path
    return out


def visible(path: Path, models: dict[str, Path]) -> set[str]:
    """The model classes a module can name: its own, and those it imports."""
    text = path.read_text()
    names = {c for c, p in models.items() if p == path}
    for group in re.findall(r"^from \.\w+ import \(?([^)]*?)\)?$", text, re.M | re.S):
        names |= {n.strip() for n in group.replace("\n", " ").split(",") if n.strip()}
    return names & set(models)


def blocks() -> dict[str, list[str]]:
    """Python class -> its generated annotation lines."""
    lists, types = field_lists(), member_types()
    models = python_models()
    out = {}
    for cls in sorted(models):
        classes = visible(models[cls], models)
        special = SPECIAL.get(cls, {})
        struct = special.get("struct", cls)
        if struct not in lists:
            continue
        source = models[cls].read_text()
        body = re.search(rf"^class {cls}\(.*?(?=^class |\Z)", source, re.M | re.S).group(0)
        lines = []
        for key, member in lists[struct]:
            if key in special.get("drop", ()):
                continue
            # A property of the class gives this field (an enum, a zero): it keeps its own type.
            if re.search(rf"^    def {key}\(self\)", body, re.M):
                continue
            cpp = types.get(struct, {}).get(member)
            annotation = special.get("types", {}).get(key) or (
                python_type(cpp, classes) if cpp else "Any")
            lines.append(f"    {key}: {annotation}")
        out[cls] = lines
    return out


def rewrite(check: bool) -> int:
    wanted = blocks()
    models = python_models()
    stale = []
    for path in sorted({models[c] for c in wanted}):
        text = path.read_text()
        new = text
        for cls, lines in wanted.items():
            if models[cls] != path:
                continue
            block = "\n".join([BEGIN, *lines, END])
            start = re.search(rf"^class {cls}\(.*?\):\n", new, re.M)
            rest = new[start.end():]
            following = re.search(r"^class ", rest, re.M)
            region = rest[:following.start()] if following else rest
            if BEGIN in region:
                old = region[region.index(BEGIN):region.index(END) + len(END)]
                region_new = region.replace(old, block)
            else:
                # After the docstring (or at the top of the body).
                doc = re.match(r'(\s*(?:"""(?:.|\n)*?"""\n))', region)
                at = doc.end() if doc else 0
                region_new = region[:at] + "\n" + block + "\n" + region[at:]
            if region_new != region:
                stale.append(cls)
                new = new[:start.end()] + region_new + rest[len(region):]
        if new != text and not check:
            path.write_text(new)
    if check and stale:
        print("out of date (run tools/pymodels/generate.py): " + ", ".join(stale))
        return 1
    if not check:
        print(f"{len(wanted)} models: " + (", ".join(stale) if stale else "all up to date"))
    return 0


if __name__ == "__main__":
    sys.exit(rewrite("--check" in sys.argv[1:]))
