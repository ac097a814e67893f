"""A first day, 6 of 6: the machine drawn with Rich, wide and narrow."""
from __future__ import annotations

from rich.console import Console

import mainboard

view = mainboard.MachineView()
for width in (100, 60, 50):
    view.show(console=Console(width=width))
