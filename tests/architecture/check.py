#!/usr/bin/env python3
"""Checks the layering that docs/architecture.md draws, so that it cannot rot.

  check.py layers SRC            every #include "folder/..." in src/ goes down, never up or across
  check.py headers INCLUDE       public headers: no internal types, no mutex members; the headers a
                                 spans-only program includes pull in no third-party header
  check.py exports NM LIB...     each library exports the public API only (nm -DC --defined-only)
  check.py python PACKAGE        the Python package's modules import each other without a cycle
                                 (an import inside a function counts; one for type checking only
                                 does not): the extension, then the models, then the facades

Exit status 1 with one line per violation.
"""
import pathlib
import re
import subprocess
import sys

# The folders of src/ and what each may include (besides its own files and the public headers).
# Bottom to top; the table in docs/architecture.md is this one.
ALLOWED = {
    # mainboard::spans (the span library) and the stateless core both libraries compile in
    "core": set(),
    "model": {"core"},
    "profile": {"core", "model"},
    "spans": {"core", "model", "profile"},
    # mainboard::mainboard
    "host": {"core"},
    "providers": {"core", "host"},
    "machine": {"core", "host", "providers"},
    "meter": {"core"},
    "gather": {"core", "host", "machine", "providers"},
    # the readiness rules read a snapshot; their readings use the view's number formats
    "check": {"core", "model", "view"},
    "fleet": {"core", "model", "view"},
    # serve: the exposition and its HTTP server (the server is compiled into the command only)
    "serve": {"core"},
    "symbols": {"core"},
    "sampling": {"core", "symbols"},
    "collect": {"core", "profile", "spans", "symbols", "traces"},
    "export": {"core", "profile"},
    # other tools' records read as profiles (PyTorch profiler traces)
    "traces": {"core", "profile"},
    # formatting never probes: the view reads models, never a provider
    "view": {"core", "profile"},
    "inject": {"core", "collect", "model"},
    "cli": {"core", "sampling", "view", "symbols", "serve", "traces"},
}
SPAN_LIBRARY = {"core", "model", "profile", "spans"}
# Of core, only these are compiled into the span library.
SPAN_CORE = {"atomic_file", "beneath", "clock", "fs", "input_file", "text"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"', re.M)


def layers(src):
    bad = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".hpp") or path.parent == src:
            continue
        folder = path.relative_to(src).parts[0]
        if folder not in ALLOWED:
            bad.append(f"{path}: folder {folder}/ is not in the layer table (tests/architecture/check.py)")
            continue
        for target, rest in INCLUDE.findall(path.read_text()):
            if target in ("mainboard", folder):
                continue
            if target not in ALLOWED[folder]:
                bad.append(f"{path}: {folder}/ includes {target}/{rest}, which is not below it")
            elif folder in SPAN_LIBRARY and target == "core" and rest.split(".")[0] not in SPAN_CORE:
                bad.append(f"{path}: the span library includes core/{rest}, which only "
                           "mainboard::mainboard compiles")
    return bad


def headers(include):
    bad = []
    pub = include / "mainboard"
    for path in sorted(pub.glob("*.hpp")):
        text = path.read_text()
        for n, line in enumerate(text.splitlines(), 1):
            code = line.split("//")[0]
            if re.search(r"\b(core|sampling|symbols|collect|providers)::", code):
                bad.append(f"{path}:{n}: an internal type in a public header: {line.strip()}")
            if re.search(r"\bstd::(recursive_)?mutex\b", code):
                bad.append(f"{path}:{n}: a mutex in a public header: {line.strip()}")
            if re.search(r"\bdetail::", code) and path.name != "span.hpp":
                bad.append(f"{path}:{n}: detail:: outside the span fast path: {line.strip()}")
    # What a spans-only program includes, transitively.
    seen, todo, third_party = set(), ["span.hpp", "profiler.hpp"], []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        text = (pub / name).read_text()
        todo += re.findall(r'#include\s+[<"]mainboard/([^">]+)[">]', text)
        for lib in re.findall(r"#include\s+<([a-zA-Z0-9_]+)/", text):
            if lib != "mainboard":
                third_party.append(f"{name} includes <{lib}/...>")
    bad += [f"spans-only headers: {t}" for t in third_party]
    umbrella = (pub / "mainboard.hpp").read_text()
    for path in sorted(pub.glob("*.hpp")):
        if path.name != "mainboard.hpp" and f'"mainboard/{path.name}"' not in umbrella:
            bad.append(f"mainboard.hpp does not include {path.name}")
    return bad


# Internal symbols the span fast path, the instrument hooks and the extension seam need across
# the library boundary (declared MAINBOARD_API on purpose).
EXPORTED_DETAIL = {
    "mainboard::detail::g_profiling",
    "mainboard::detail::span_enter",
    "mainboard::detail::span_exit",
    "mainboard::detail::span_enter_on",
    "mainboard::detail::track_open",
    "mainboard::detail::track_state",
    "mainboard::detail::track_close",
    "mainboard::detail::open_path",
    "mainboard::detail::span_name",
    "mainboard::detail::instrumented_enter",
    "mainboard::detail::instrumented_exit",
    "mainboard::detail::install_session_extension",
    "mainboard::detail::install_profile_reader",
    "mainboard::detail::install_trace_loader",
}


def exports(nm, libs):
    bad = []
    for lib in libs:
        out = subprocess.run([nm, "-DC", "--defined-only", lib], check=True,
                             capture_output=True, text=True).stdout
        count = 0
        for line in out.splitlines():
            parts = line.split(" ", 2)
            if len(parts) < 3:
                continue
            symbol = parts[2]
            count += 1
            name = symbol.split("(")[0]
            for prefix in ("typeinfo for ", "typeinfo name for ", "vtable for "):
                name = name.removeprefix(prefix)
            if not name.startswith("mainboard::"):
                bad.append(f"{lib}: exports {symbol}")
            elif re.match(r"mainboard::(core|sampling|symbols|collect|json_detail|providers|host)::", name):
                bad.append(f"{lib}: exports internal {symbol}")
            elif name.startswith("mainboard::detail::") and name not in EXPORTED_DETAIL:
                bad.append(f"{lib}: exports internal {symbol}")
            elif re.search(r"mainboard::(core|sampling|symbols)::", symbol):
                bad.append(f"{lib}: an internal type in an exported signature: {symbol}")
        print(f"{lib}: {count} exported symbols")
    return bad


#: The Python package's layers, bottom up: a module imports only modules of its own layer or
#: below (docs/python.md). A module not listed is a facade.
PYTHON_LAYERS = [
    {"_checks", "_native", "_log", "_auto"},  # the extension (a compiled leaf), as it is reached
    {"_models", "_snapshot"},  # models over its documents (their factories call the extension)
]


def _python_imports(path, package):
    """The package's modules `path` imports anywhere but under `if TYPE_CHECKING:`."""
    import ast

    tree = ast.parse(path.read_text())
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for b in node.body for n in ast.walk(b))
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip or not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = path.parent.relative_to(package).parts[: len(path.parent.relative_to(package).parts)
                                                      - (node.level - 1)]
        if node.module:
            found.add(".".join((*base, node.module)))
        else:
            found.update(".".join((*base, alias.name)) for alias in node.names)
    return found


def python(package):
    modules = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        modules[name] = path
    graph = {name: {m for m in _python_imports(path, package) if m in modules and m != name}
             for name, path in modules.items()}
    bad = []
    # Cycles, by depth-first search (the package's own __init__ imports everything: left out).
    state = {}

    def visit(name, trail):
        state[name] = "open"
        for target in sorted(graph[name]):
            if target == "":
                continue
            if state.get(target) == "open":
                cycle = trail[trail.index(target):] + [target]
                bad.append(f"{package}: an import cycle: {' -> '.join(cycle)}")
            elif target not in state:
                visit(target, trail + [target])
        state[name] = "done"

    for name in sorted(graph):
        if name and name not in state:
            visit(name, [name])

    def layer(name):
        for i, members in enumerate(PYTHON_LAYERS):
            if name.split(".")[0] in members:
                return i
        return len(PYTHON_LAYERS)

    for name, targets in sorted(graph.items()):
        for target in sorted(targets):
            if target and layer(target) > layer(name):
                bad.append(f"{modules[name]}: imports {target}, a layer above it")
    return bad


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    what = argv[1]
    if what == "layers":
        bad = layers(pathlib.Path(argv[2]))
    elif what == "headers":
        bad = headers(pathlib.Path(argv[2]))
    elif what == "exports":
        bad = exports(argv[2], argv[3:])
    elif what == "python":
        bad = python(pathlib.Path(argv[2]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
