"""The package offers every public name of the API reference, with the documented kind, bases and
signature. The names are listed in reference_api.txt (its header describes the format); every
mismatch is collected and the test fails once with the whole list, one line per mismatch."""

import ast
import dataclasses
import functools
import importlib
import inspect
import pathlib
import re
import sys
import time
import types

import pytest

import mainboard

REFERENCE = pathlib.Path(__file__).with_name("reference_api.txt")

KINDS = {"module", "class", "property", "cached_property", "method", "classmethod", "staticmethod",
         "function"}
MEMBER_KINDS = {"property", "cached_property", "method", "classmethod", "staticmethod"}
CALLABLE_KINDS = {"class", "method", "classmethod", "staticmethod", "function"}
POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_MISSING = object()


@dataclasses.dataclass
class DocParam:
    name: str
    keyword_only: bool
    default: str | None  # the default's source text, None when the reference gives none


@dataclasses.dataclass
class Entry:
    lineno: int
    name: str
    kind: str
    flags: dict
    params: list | None  # list[DocParam], None when no signature is documented


def _parse_params(text: str, where: str) -> list:
    """'(a, b=1, *, c)' as DocParams, read with the Python parser."""
    source = f"def _{text}: pass"
    try:
        fn = ast.parse(source).body[0]
    except SyntaxError as e:
        raise ValueError(f"{where}: unparsable parameters {text!r}: {e}") from None
    args = fn.args
    if args.vararg or args.kwarg or args.posonlyargs:
        raise ValueError(f"{where}: only plain and keyword-only parameters are supported")
    out = []
    plain_defaults = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults)
    for arg, default in zip(args.args, plain_defaults):
        out.append(DocParam(arg.arg, False,
                            None if default is None else ast.get_source_segment(source, default)))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        out.append(DocParam(arg.arg, True,
                            None if default is None else ast.get_source_segment(source, default)))
    return out


def load_reference(path: pathlib.Path = REFERENCE) -> list:
    entries = []
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path.name}:{lineno}"
        paren = line.find("(")
        head, sig = (line, None) if paren < 0 else (line[:paren], line[paren:].strip())
        fields = head.split()
        if len(fields) < 2:
            raise ValueError(f"{where}: expected 'NAME KIND [FLAG ...] [(PARAMETERS)]': {raw!r}")
        name, kind, *flag_words = fields
        if kind not in KINDS:
            raise ValueError(f"{where}: unknown kind {kind!r}")
        flags = {}
        for word in flag_words:
            key, _, value = word.partition("=")
            if key == "bases" and value and kind == "class":
                flags["bases"] = value.split(",")
            elif key == "dataclass" and not value and kind == "class":
                flags["dataclass"] = True
            elif key == "cached" and not value and kind == "classmethod":
                flags["cached"] = True
            elif key == "overloaded" and not value and kind in CALLABLE_KINDS:
                flags["overloaded"] = True
            else:
                raise ValueError(f"{where}: unknown flag {word!r} for kind {kind}")
        if sig is not None and kind not in CALLABLE_KINDS:
            raise ValueError(f"{where}: a {kind} takes no parameters")
        params = None if sig is None else _parse_params(sig, where)
        entries.append(Entry(lineno, name, kind, flags, params))
    return entries


ENTRIES = load_reference()
MODULES = {"mainboard"} | {e.name for e in ENTRIES if e.kind == "module"}


def default_namespace() -> dict:
    ns = dict(vars(mainboard))
    ns.update((name, getattr(mainboard, name)) for name in mainboard.__all__)  # the lazy ones too
    ns.update(sys=sys, time=time, re=re)
    return ns


def static_lookup(cls: type, name: str):
    """The attribute as defined in the first class of the MRO that defines it (no descriptor
    protocol), like inspect.getattr_static restricted to the class's own MRO."""
    for klass in inspect.getmro(cls):
        try:
            namespace = object.__getattribute__(klass, "__dict__")
        except AttributeError:
            continue
        if name in namespace:
            return namespace[name]
    return _MISSING


def resolve(dotted: str):
    """The object a dotted name names: the longest documented module prefix is imported with
    importlib, the rest is looked up attribute by attribute. Raises LookupError."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in MODULES:
            break
    else:
        raise LookupError(f"{dotted} is outside every documented module")
    try:
        obj = importlib.import_module(prefix)
    except ImportError as e:
        raise LookupError(f"cannot import module {prefix}: {e}") from None
    path = prefix
    for part in parts[cut:]:
        path += "." + part
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise LookupError(f"{path} does not exist") from None
    return obj


def signature_of(entry: Entry, obj, static):
    """The runtime signature as a caller sees it (no self/cls). Raises (ValueError, TypeError)."""
    if entry.kind == "method":
        sig = inspect.signature(obj)
        params = list(sig.parameters.values())
        if params and params[0].kind in POSITIONAL \
                and (isinstance(obj, types.FunctionType) or params[0].name == "self"):
            params = params[1:]  # self
        return sig.replace(parameters=params)
    return inspect.signature(obj)  # bound classmethod, staticmethod, function, class


def default_matches(expected_text: str, actual) -> tuple:
    """(ok, expected shown) for a documented default against the runtime one."""
    try:
        expected = ast.literal_eval(expected_text)
    except (ValueError, SyntaxError):
        pass
    else:
        if expected is None:
            return actual is None, "None"
        return repr(expected) == repr(actual), repr(expected)
    try:
        expected = eval(expected_text, default_namespace())  # noqa: S307 - our own reference file
    except Exception as e:  # noqa: BLE001 - any failure is a mismatch to report
        return False, f"{expected_text} (does not evaluate: {type(e).__name__}: {e})"
    try:
        same = actual is expected or bool(actual == expected)
    except Exception:  # noqa: BLE001
        same = False
    return same, f"{expected_text} = {expected!r}"


def check_signature(entry: Entry, sig: inspect.Signature) -> list:
    problems = []
    actual = sig.parameters
    documented = {p.name for p in entry.params}
    for doc in entry.params:
        param = actual.get(doc.name)
        if param is None:
            problems.append(f"parameter {doc.name!r} missing")
            continue
        if param.kind in VARIADIC:
            problems.append(f"parameter {doc.name!r} is {param.kind.description}, documented as "
                            f"{'keyword-only' if doc.keyword_only else 'positional'}")
            continue
        if doc.keyword_only != (param.kind == inspect.Parameter.KEYWORD_ONLY):
            problems.append(f"parameter {doc.name!r} is {param.kind.description}, documented as "
                            f"{'keyword-only' if doc.keyword_only else 'positional'}")
        if doc.default is not None:
            if param.default is inspect.Parameter.empty:
                problems.append(f"parameter {doc.name!r} has no default, documented default "
                                f"{doc.default}")
            else:
                ok, shown = default_matches(doc.default, param.default)
                if not ok:
                    problems.append(f"parameter {doc.name!r} default is {param.default!r}, "
                                    f"documented {shown}")
    # documented positional parameters keep their documented positions
    doc_positional = [p.name for p in entry.params if not p.keyword_only]
    act_positional = [p.name for p in actual.values() if p.kind in POSITIONAL]
    if all(name in act_positional for name in doc_positional) \
            and act_positional[:len(doc_positional)] != doc_positional:
        problems.append(f"positional parameters are ({', '.join(act_positional)}), documented "
                        f"({', '.join(doc_positional)}) first and in that order")
    for param in actual.values():
        if param.name in documented:
            continue
        if entry.flags.get("overloaded"):
            problems.append(f"undocumented parameter {param.name!r} (documented exactly "
                            f"({', '.join(p.name for p in entry.params)}))")
        elif param.kind in POSITIONAL and param.default is inspect.Parameter.empty:
            # extras must be keyword-only, variadic or defaulted
            problems.append(f"undocumented required positional parameter {param.name!r}")
    return problems


def check_kind(entry: Entry, obj, static) -> list:
    kind = entry.kind
    if kind == "module":
        return [] if isinstance(obj, types.ModuleType) else [f"is {type(obj).__name__}, not a module"]
    if kind == "class":
        if not isinstance(obj, type):
            return [f"is {type(obj).__name__}, not a class"]
        problems = []
        mro_names = [k.__name__ for k in inspect.getmro(obj)]
        for base in entry.flags.get("bases", []):
            if base not in mro_names[1:]:
                problems.append(f"base {base} not in MRO ({', '.join(mro_names)})")
        if entry.flags.get("dataclass") and not dataclasses.is_dataclass(obj):
            problems.append("is not a dataclass")
        return problems
    if kind == "function":
        if isinstance(obj, type) or not callable(obj):
            return [f"is {type(obj).__name__}, not a function"]
        return []
    # members of a class
    shown = type(static).__name__
    if kind in ("property", "cached_property"):
        if not isinstance(static, (property, functools.cached_property)):
            return [f"is {shown}, documented {kind.replace('_', ' ')} (want property or "
                    f"functools.cached_property)"]
        return []
    if kind == "classmethod":
        if not isinstance(static, classmethod):
            return [f"is {shown}, documented classmethod"]
        if entry.flags.get("cached"):
            inner = static.__func__
            if not hasattr(inner, "cache_clear"):
                return ["classmethod is not cached (no cache_clear on the function under it)"]
        return []
    if kind == "staticmethod":
        if not isinstance(static, (staticmethod, classmethod)):
            return [f"is {shown}, documented staticmethod (want staticmethod or classmethod)"]
        return []
    if kind == "method":
        if isinstance(static, (staticmethod, classmethod, property, functools.cached_property)) \
                or not callable(static):
            return [f"is {shown}, documented method"]
        return []
    raise AssertionError(kind)


def check_entry(entry: Entry, resolved: dict) -> list:
    """Mismatches for one line, each as 'name: problem'."""
    def fail(problems):
        return [f"{entry.name} [{entry.kind}]: {p}" for p in problems]

    owner = attr = static = None
    if entry.kind in MEMBER_KINDS:
        owner_name, _, attr = entry.name.rpartition(".")
        owner = resolved.get(owner_name, _MISSING)
        if owner is _MISSING:
            try:
                owner = resolve(owner_name)
            except LookupError as e:
                return fail([str(e)])
        if not isinstance(owner, type):
            return fail([f"{owner_name} is {type(owner).__name__}, not a class"])
        static = static_lookup(owner, attr)
        if static is _MISSING:
            return fail([f"{attr} not defined on {owner_name} or its bases"])
        try:
            obj = getattr(owner, attr)
        except Exception:  # noqa: BLE001 - a descriptor may refuse class access
            obj = static
    else:
        try:
            obj = importlib.import_module(entry.name) if entry.kind == "module" else resolve(entry.name)
        except (LookupError, ImportError) as e:
            return fail([str(e)])
        resolved[entry.name] = obj

    problems = check_kind(entry, obj, static)
    if entry.params is not None and not problems:
        try:
            sig = signature_of(entry, obj, static)
        except (ValueError, TypeError) as e:
            problems.append(f"no inspectable signature: {e}")
        else:
            problems += check_signature(entry, sig)
    return fail(problems)


def test_reference_file_lists_unique_names():
    seen = {}
    duplicates = []
    for e in ENTRIES:
        if e.name in seen:
            duplicates.append(f"{e.name}: lines {seen[e.name]} and {e.lineno}")
        seen[e.name] = e.lineno
    assert not duplicates, "\n".join(duplicates)
    assert len(ENTRIES) > 100


def test_package_matches_the_api_reference():
    resolved: dict = {}
    mismatches = []
    unresolved_owners = set()
    for entry in ENTRIES:
        owner_name = entry.name.rpartition(".")[0]
        if entry.kind in MEMBER_KINDS and owner_name in unresolved_owners:
            continue  # the class's own line already reports it
        found = check_entry(entry, resolved)
        if entry.kind in ("class", "module") and entry.name not in resolved:
            unresolved_owners.add(entry.name)
        mismatches += found
    skipped = sum(1 for e in ENTRIES if e.kind in MEMBER_KINDS
                  and e.name.rpartition(".")[0] in unresolved_owners)
    if mismatches:
        note = f" ({skipped} members of missing classes not checked)" if skipped else ""
        pytest.fail(f"{len(mismatches)} mismatches with the API reference over {len(ENTRIES)} "
                    f"names{note}:\n" + "\n".join(mismatches), pytrace=False)
