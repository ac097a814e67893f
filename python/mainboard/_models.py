"""The reference's base classes: frozen models over the JSON documents of the C++ library, the
process-wide singleton, and the registry of vendor providers.

A model holds the document the library wrote (the same one `mainboard snapshot --json` prints)
and reads its fields from it on access: the field lists live once, in the C++ library's JSON
definitions. A class says only what the document does not: which fields are models themselves
(`_nested`), the fields a model made from nothing starts with (`_defaults`), and the properties
the reference defines on top of the fields. The API is pydantic's (model_dump, model_validate,
model_copy, model_fields, model_json_schema), without depending on pydantic.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

__all__ = ["FieldInfo", "FrozenInstanceError", "FrozenModel", "Registry", "Singleton"]


class FrozenInstanceError(AttributeError):
    """Raised on assignment to a field of a frozen model (as dataclasses' is)."""


class cached_property(functools.cached_property):  # type: ignore[type-arg]
    """functools.cached_property that refuses assignment and deletion: computed once per
    instance, then read-only, as a property is. Refusing makes it a data descriptor, so the
    cached value is read through `__get__` (one dictionary look-up) rather than straight from the
    instance, and a type checker's view (read-only, like property) agrees with the object."""

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        try:
            return instance.__dict__[self.attrname]
        except KeyError:
            return super().__get__(instance, owner)

    def __set__(self, instance: Any, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to {self.attrname!r}: "
                                  f"{type(instance).__name__}.{self.attrname} is read-only")

    def __delete__(self, instance: Any) -> None:
        raise FrozenInstanceError(f"cannot delete {self.attrname!r}: "
                                  f"{type(instance).__name__}.{self.attrname} is read-only")


class FieldInfo:
    """What a model class declares about one field: its annotation (as written) and default."""

    __slots__ = ("annotation", "default", "description")

    def __init__(self, annotation: str = "Any", default: Any = None, description: str = "") -> None:
        self.annotation = annotation
        self.default = default
        self.description = description

    def __repr__(self) -> str:
        return f"FieldInfo(annotation={self.annotation}, default={self.default!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, FieldInfo) and self.annotation == other.annotation
                and self.default == other.default)

    __hash__ = None  # type: ignore[assignment]


class _ModelFields:
    """`model_fields`: on the class, the fields it declares (annotations and defaults); on an
    instance, the fields of its document (declared ones first)."""

    def __get__(self, obj: Any, cls: type) -> dict[str, FieldInfo]:
        declared = _declared_fields(cls)
        if obj is None:
            return dict(declared)
        out = dict(declared)
        for name, value in obj._document().items():
            if name not in out:
                out[name] = FieldInfo(_json_type_name(value))
        return out


def _declared_fields(cls: type) -> dict[str, FieldInfo]:
    cached = cls.__dict__.get("_fields_cache")
    if cached is not None:
        return cached
    out: dict[str, FieldInfo] = {}
    for klass in reversed(cls.__mro__):
        notes = klass.__dict__.get("__annotations__", {})
        defaults = klass.__dict__.get("_defaults", {})
        for name, note in notes.items():
            if name.startswith("_") or "ClassVar" in str(note):
                continue
            out[name] = FieldInfo(str(note), defaults.get(name))
        for name, value in defaults.items():
            if name not in out:
                out[name] = FieldInfo(_json_type_name(value), value)
    cls._fields_cache = out  # type: ignore[attr-defined]
    return out


def _json_type_name(value: Any) -> str:
    if value is None:
        return "Any"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, list):
        return "tuple"
    return type(value).__name__


def _rebuild(cls: type[FrozenModel], document: dict[str, Any]) -> FrozenModel:
    """A model of `cls` over `document` as it is (unpickling)."""
    obj = object.__new__(cls)
    object.__setattr__(obj, "_data", document)
    object.__setattr__(obj, "_cache", {})
    return obj


class FrozenModel:
    """An immutable value read from one JSON object of the library.

    Fields are attributes; nested objects are models, lists are tuples. Models compare equal
    when their documents are equal; `model_dump()` / `model_dump_json()` give the document back,
    `model_validate()` / `model_validate_json()` make one from a mapping or JSON text, and
    `model_copy(update=...)` makes a changed copy.
    """

    __slots__ = ("_data", "_cache", "__weakref__")
    #: field name -> model class of its value (or of each item, for a list)
    _nested: ClassVar[Mapping[str, type[FrozenModel]]] = {}
    #: the fields a model made without them starts with
    _defaults: ClassVar[Mapping[str, Any]] = {}
    #: a reading that may be unavailable: where the library says why it is missing, the field
    #: that holds this model is None and `unavailable_reason(field)` says why
    _readings: ClassVar[bool] = False
    #: such a reading the reference never gives as None (Memory): where it is missing, the field
    #: holds the model with zero figures, `supported` False and `reason` saying why
    _zero_when_unavailable: ClassVar[bool] = False
    model_fields: ClassVar[dict[str, FieldInfo]] = _ModelFields()  # type: ignore[assignment]

    def __init__(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> None:
        document = _copy(dict(type(self)._defaults))
        if data is not None:
            document.update(data)
        for name, value in fields.items():
            document[name] = value.model_dump() if isinstance(value, FrozenModel) else value
        object.__setattr__(self, "_data", type(self)._prepare(document))
        object.__setattr__(self, "_cache", {})

    @classmethod
    def _prepare(cls, document: dict[str, Any]) -> dict[str, Any]:
        """The document as this model holds it (a subclass may reshape or fill it)."""
        return document

    def _document(self) -> dict[str, Any]:
        return self._data

    # ---- construction ---------------------------------------------------------------------

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        """A model of `data`: any mapping (as json.loads returns it), or a model (its fields)."""
        if isinstance(data, FrozenModel):
            data = data.model_dump()
        if not isinstance(data, Mapping):
            raise TypeError(f"{cls.__name__}.model_validate() needs a mapping, "
                            f"not {type(data).__name__}")
        return cls(dict(data))

    @classmethod
    def model_validate_json(cls, text: str | bytes | bytearray) -> Any:
        """A model of JSON text (an object)."""
        import json

        if not isinstance(text, (str, bytes, bytearray)):
            raise TypeError(f"{cls.__name__}.model_validate_json() needs str or bytes, "
                            f"not {type(text).__name__}")
        return cls.model_validate(json.loads(text))

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        """A JSON Schema (draft 2020-12) of the fields this class declares; a field the class
        does not declare is allowed too (the library's documents carry more)."""
        properties = {name: _schema_of(info) for name, info in _declared_fields(cls).items()}
        schema: dict[str, Any] = {"title": cls.__name__, "type": "object",
                                  "properties": properties, "additionalProperties": True}
        doc = (cls.__doc__ or "").strip()
        if doc:
            schema["description"] = doc.split("\n\n")[0]
        return schema

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy, with the fields in `update` replaced (models in it are taken as documents)."""
        document = _copy(self._document())
        for name, value in (update or {}).items():
            document[name] = value.model_dump() if isinstance(value, FrozenModel) else _copy(value)
        return type(self)._from_document(document)

    @classmethod
    def _from_document(cls, document: dict[str, Any]) -> Any:
        return _rebuild(cls, cls._prepare(document))

    # ---- fields ---------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_data", "_cache"):
            raise AttributeError(name)
        cache = self._cache
        if name in cache:
            return cache[name]
        document = self._document()
        try:
            raw = document[name]
        except KeyError:
            fields = ", ".join(sorted(document)) or "none"
            raise AttributeError(f"{type(self).__name__} has no field {name!r} "
                                 f"(its fields: {fields})") from None
        value = _convert(raw, type(self)._nested.get(name))
        cache[name] = value
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}: {type(self).__name__} "
                                  "is frozen (model_copy(update=...) makes a changed copy)")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}: {type(self).__name__} is frozen")

    def unavailable_reason(self, field: str) -> str | None:
        """Why the reading in `field` is None: the library's reason (unsupported here, or
        failed); None where the field holds a reading, or is None for no stated reason."""
        document = self._document()
        if field not in document:
            raise AttributeError(f"{type(self).__name__} has no field {field!r}")
        why = unavailable(document[field])
        return None if why is None else str(why.get("reason", ""))

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._document()))

    def model_dump(self, *, mode: str = "python", include: Any = None, exclude: Any = None,
                   exclude_none: bool = False) -> dict[str, Any]:
        """The document as plain dicts, lists and scalars (a copy). `include` / `exclude`: a
        set of field names, or a dict of them to nested sets (as pydantic takes them); `mode`:
        "python" or "json" (the same here: every value is already a JSON value)."""
        if mode not in ("python", "json"):
            raise ValueError(f"mode is 'python' or 'json', not {mode!r}")
        return _select(self._document(), include, exclude, exclude_none)

    def model_dump_json(self, *, indent: int | None = None, include: Any = None,
                        exclude: Any = None, exclude_none: bool = False) -> str:
        """The document as JSON text (keys sorted, as the library writes them)."""
        import json

        return json.dumps(self.model_dump(include=include, exclude=exclude,
                                          exclude_none=exclude_none),
                          indent=indent, sort_keys=True, ensure_ascii=False)

    # ---- value semantics ------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrozenModel):
            return NotImplemented
        return type(self) is type(other) and self._document() == other._document()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.model_dump_json()))

    def __repr__(self) -> str:
        document = self._document()
        fields = ", ".join(f"{k}={document[k]!r}" for k in list(document)[:6])
        more = ", …" if len(document) > 6 else ""
        return f"{type(self).__name__}({fields}{more})"

    def __copy__(self) -> Any:
        return self  # immutable: a copy is the same value

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self

    def __reduce__(self) -> Any:  # pickling: the class and its document
        return (_rebuild, (type(self), self._document()))


def _schema_of(info: FieldInfo) -> dict[str, Any]:
    note = info.annotation.replace(" ", "")
    optional = note.endswith("|None") or note.startswith("None|")
    note = note.replace("|None", "").replace("None|", "")
    simple = {"int": "integer", "float": "number", "str": "string", "bool": "boolean",
              "dict": "object"}
    if note in simple:
        schema: dict[str, Any] = {"type": simple[note]}
    elif note.startswith("tuple[") or note.startswith("list[") or note == "tuple":
        schema = {"type": "array"}
    elif note and note[0].isupper() and note not in ("Any",):
        schema = {"type": "object", "title": note}
    else:
        schema = {}
    if optional:
        schema = {"anyOf": [schema, {"type": "null"}]} if schema else {}
    if info.default is not None:
        schema["default"] = info.default
    return schema


def _select(document: dict[str, Any], include: Any, exclude: Any,
            exclude_none: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in document.items():
        if include is not None and name not in include:
            continue
        sub_include = include.get(name) if isinstance(include, Mapping) else None
        sub_exclude = exclude.get(name) if isinstance(exclude, Mapping) else None
        if exclude is not None and name in exclude and not isinstance(sub_exclude, (set, Mapping,
                                                                                      frozenset)):
            continue
        if exclude_none and value is None:
            continue
        if isinstance(value, dict) and (isinstance(sub_include, (set, frozenset, Mapping))
                                        or isinstance(sub_exclude, (set, frozenset, Mapping))
                                        or exclude_none):
            out[name] = _select(value, sub_include if isinstance(sub_include, (set, frozenset,
                                                                                Mapping)) else None,
                                sub_exclude if isinstance(sub_exclude, (set, frozenset, Mapping))
                                else None, exclude_none)
        else:
            out[name] = _copy(value)
    return out


def unavailable(raw: Any, schema1: bool = True) -> dict[str, Any] | None:
    """Why a reading is missing, where `raw` says so: {"unavailable": {"status", "reason"}}
    in the reading's place, or (`schema1`: the reading is one of those schema 1 marked that way)
    "supported": false beside its fields."""
    if not isinstance(raw, dict):
        return None
    why = raw.get("unavailable")
    if isinstance(why, dict) and len(raw) == 1 and isinstance(why.get("reason", ""), str):
        return why
    if (schema1 and raw.get("supported") is False and "reason" in raw
            and isinstance(raw["reason"], str)):
        return {"status": "unsupported", "reason": raw["reason"]}
    return None


def _convert(raw: Any, model: type[FrozenModel] | None) -> Any:
    if isinstance(raw, list):
        return tuple(_convert(item, model) for item in raw)
    if isinstance(raw, dict):
        if (unavailable(raw, schema1=model is not None and model._readings) is not None
                and not (model is not None and model._zero_when_unavailable)):
            return None
        return (model or FrozenModel)(raw)
    return raw


def models_of(cls: type[Any], items: list[Any]) -> tuple[Any, ...]:
    """A list of documents of the library as a tuple of models."""
    return tuple(cls(item) for item in items)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


class Singleton:
    """One instance per class and process: `Cls() is Cls()`. The first call constructs it
    (under a lock, so two threads cannot make two); later calls return it."""

    _instances: ClassVar[dict[type, Any]] = {}
    _singleton_lock: ClassVar[threading.Lock] = threading.Lock()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        instance = Singleton._instances.get(cls)
        if instance is not None:
            return instance
        with Singleton._singleton_lock:
            instance = Singleton._instances.get(cls)
            if instance is None:
                instance = super().__new__(cls)
                instance._singleton_init(*args, **kwargs)
                Singleton._instances[cls] = instance
            return instance

    def _singleton_init(self, *args: Any, **kwargs: Any) -> None:
        """Builds the one instance (once per process)."""

    @classmethod
    def _forget_instance(cls) -> None:
        """Drops the instance, so that the next call builds another (after fork, in tests)."""
        with Singleton._singleton_lock:
            Singleton._instances.pop(cls, None)


class Registry:
    """A registry root: each concrete provider subclass registers itself when its class is
    made (a class with a non-empty `provider`), and the root's `all()` fans out over them,
    concatenating each provider's own probe; one that fails is logged and skipped."""

    provider: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if Registry in cls.__bases__:
            cls._providers = {}  # type: ignore[attr-defined]
            return
        if cls.__dict__.get("provider"):
            for base in cls.__mro__[1:]:
                if Registry in base.__bases__:
                    base._providers[cls.provider] = cls  # type: ignore[attr-defined]
                    break

    @classmethod
    def providers(cls) -> dict[str, type]:
        """The registered providers of this root, by name."""
        for base in cls.__mro__:
            if Registry in base.__bases__:
                return dict(base._providers)  # type: ignore[attr-defined]
        return {}


GIB = float(1 << 30)


def html_mimebundle(self: Any, include: Any = None, exclude: Any = None) -> dict[str, str]:
    """`_repr_mimebundle_` of what a notebook draws: its HTML (`_repr_html_`) and, for a front end
    that shows no HTML, its repr."""
    return {"text/html": self._repr_html_(), "text/plain": repr(self)}


class ReportText(str):
    """A report as text (a str), shown as text in a notebook and in IPython: its lines, not the
    quoted string with its escapes that a str's repr is."""

    __slots__ = ()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(str(self))}</pre>"


class MainboardWarning(UserWarning):
    """What mainboard saw that its caller should know and that did not stop it: a profiled
    target that failed (Profiler.run without strict=True). Filter it as any warning."""
