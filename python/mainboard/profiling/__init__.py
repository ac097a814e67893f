"""Profiling helpers beside the session: per-architecture dispatch (arch_config)."""

from . import arch_config
from .arch_config import ArchConfig, arch_family

__all__ = ["ArchConfig", "arch_config", "arch_family"]
