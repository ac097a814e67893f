"""Per-architecture dispatch: values (tile sizes, a kernel configuration) keyed by a GPU's
arch_key, with fallbacks — the C++ library's ArchConfig, holding Python values.

    tiles = ArchConfig((64, 64))
    tiles.set("sm_90", (128, 256)).set("ampere", (128, 128))
    tiles.lookup(gpu)        # its arch_key exactly, else sm_90a → sm_90, else its family, else default

Lookup order: the exact key ("sm_90a", "gfx942"); the key without an architecture-specific
suffix ("sm_90a" → "sm_90"); the family ("hopper", "cdna3"); the default.
"""

from __future__ import annotations

from .. import _mainboard

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def arch_family(arch_key: str) -> str:
    """The family of an arch key: "sm_90" → "hopper", "gfx942" → "cdna3"; "" when unknown."""
    return _mainboard._arch_family(arch_key)


def family_key(architecture: str) -> str:
    """A human architecture name as a family key: "CDNA 3" → "cdna3"."""
    return _mainboard._family_key(architecture)


class ArchConfig:
    """Values by architecture, with a default."""

    def __init__(self, default: Any) -> None:
        self._native = _mainboard._ArchConfig(default)

    def set(self, key: str, value: Any) -> ArchConfig:
        """The value for an arch key ("sm_90") or a family ("hopper"); case-insensitive."""
        if not isinstance(key, str) or not key:
            raise TypeError(f"key is an arch key or family name (a non-empty str), not {key!r}")
        self._native.set(key, value)
        return self

    @staticmethod
    def _keys(target: Any) -> tuple[str, str]:
        if isinstance(target, str):
            return target, ""
        info = getattr(target, "info", target)  # a GPU, or its GpuInfo
        key = getattr(info, "arch_key", None)
        if not isinstance(key, str):
            raise TypeError(f"target is an arch key (str), a GPU or its GpuInfo, "
                            f"not {type(target).__name__}")
        architecture = getattr(info, "architecture", "")
        return key, architecture if isinstance(architecture, str) else ""

    def lookup(self, target: Any) -> Any:
        """The value for an arch key, a GPU or its info, through the fallbacks."""
        return self._native.lookup(*self._keys(target))

    def resolve(self, target: Any) -> str:
        """Which entry a lookup uses: the matching key, or "default"."""
        return self._native.resolve(*self._keys(target))

    @property
    def default(self) -> Any:
        return self._native.fallback
