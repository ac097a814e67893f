"""Frozen models over the JSON documents of the C++ library.

A model holds the document the library wrote (the same one `mainboard snapshot --json` prints)
and reads its fields from it on access: the field lists live once, in the C++ library's JSON
definitions, not again here. A class says only what the document does not: which fields are
models themselves (`_nested`), and the properties the reference defines on top of the fields.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` is not imported at run time: `import mainboard` stays quick
if TYPE_CHECKING:
    from typing import Any, ClassVar, Mapping


class FrozenInstanceError(AttributeError):
    """Raised on assignment to a field of a frozen model (as dataclasses' is)."""


class FrozenModel:
    """An immutable value read from one JSON object of the library.

    Fields are attributes; nested objects are models, lists are tuples. Models compare equal
    when their documents are equal, and `model_dump()` / `model_dump_json()` give the document
    back.
    """

    __slots__ = ("_data", "_cache")
    #: field name -> model class of its value (or of each item, for a list)
    _nested: ClassVar[Mapping[str, type[FrozenModel]]] = {}

    def __init__(self, data: Mapping[str, Any] | None = None, /, **fields: Any) -> None:
        document = dict(data) if data is not None else {}
        for name, value in fields.items():
            document[name] = value.model_dump() if isinstance(value, FrozenModel) else value
        object.__setattr__(self, "_data", document)
        object.__setattr__(self, "_cache", {})

    @classmethod
    def model_validate(cls, data: Mapping[str, Any]) -> FrozenModel:
        """A model of `data` (a mapping, as `json.loads` returns it)."""
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__} needs a mapping, not {type(data).__name__}")
        return cls(data)

    @classmethod
    def model_validate_json(cls, text: str | bytes) -> FrozenModel:
        import json

        return cls.model_validate(json.loads(text))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        cache = self._cache
        if name in cache:
            return cache[name]
        try:
            raw = self._data[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None
        value = _convert(raw, type(self)._nested.get(name))
        cache[name] = value
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._data))

    def model_fields(self) -> tuple[str, ...]:
        """The document's field names."""
        return tuple(self._data)

    def model_dump(self) -> dict[str, Any]:
        """The document, as plain dicts, lists and scalars (a copy)."""
        return _copy(self._data)

    def model_dump_json(self, *, indent: int | None = None) -> str:
        """The document as JSON text (keys sorted, as the library writes them)."""
        import json

        return json.dumps(self._data, indent=indent, sort_keys=True, ensure_ascii=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrozenModel):
            return NotImplemented
        return type(self) is type(other) and self._data == other._data

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.model_dump_json()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={self._data[k]!r}" for k in list(self._data)[:6])
        more = ", …" if len(self._data) > 6 else ""
        return f"{type(self).__name__}({fields}{more})"

    def __reduce__(self):  # pickling: the class and its document
        return (type(self), (self._data,))


def _convert(raw: Any, model: type[FrozenModel] | None) -> Any:
    if isinstance(raw, list):
        return tuple(_convert(item, model) for item in raw)
    if isinstance(raw, dict):
        return (model or FrozenModel)(raw)
    return raw


def models_of(cls: type[FrozenModel], items: list[Any]) -> tuple[Any, ...]:
    """A list of documents of the library as a tuple of models."""
    return tuple(cls(item) for item in items)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


GIB = float(1 << 30)
