#!/usr/bin/env python3
"""Pictures of the live views for the README: `mainboard top` on this host with the fake NVIDIA
library's eight GPUs (a Python program keeping a CPU busy) and `mainboard profile top` on that
program, each run in a real terminal (tmux), its screen captured with its colours, drawn as HTML
and shot by headless Chromium. The program runs from a temporary folder as `train.py`, so the
pictures show no path of this machine.

    tui-screenshots.py BUILD_DIR OUT_DIR

Writes OUT_DIR/top.png and OUT_DIR/profile-top.png (and the .html they were shot from).
"""
import html
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
COLOURS = {30: "#2e3436", 31: "#e06c75", 32: "#98c379", 33: "#e5c07b", 34: "#61afef",
           35: "#c678dd", 36: "#56b6c2", 37: "#dcdfe4", 90: "#7f848e"}
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def to_html(text: str, title: str) -> str:
    """The captured screen (ANSI colours, bold, faint, reverse) as a page of spans."""
    out = []
    state = {"fg": None, "bold": False, "dim": False, "reverse": False}
    pos = 0

    def span(chunk: str) -> None:
        if not chunk:
            return
        fg = COLOURS.get(state["fg"], "#dcdfe4")
        bg = "#1e2127"
        if state["reverse"]:
            fg, bg = bg, fg
        style = f"color:{fg};background:{bg}"
        if state["bold"]:
            style += ";font-weight:bold"
        if state["dim"]:
            style += ";opacity:0.6"
        out.append(f'<span style="{style}">{html.escape(chunk)}</span>')

    for m in SGR.finditer(text):
        span(text[pos:m.start()])
        pos = m.end()
        codes = [int(c) for c in m.group(1).split(";") if c] or [0]
        for c in codes:
            if c == 0:
                state = {"fg": None, "bold": False, "dim": False, "reverse": False}
            elif c == 1:
                state["bold"] = True
            elif c == 2:
                state["dim"] = True
            elif c == 7:
                state["reverse"] = True
            elif c == 22:
                state["bold"] = state["dim"] = False
            elif c == 27:
                state["reverse"] = False
            elif c == 39:
                state["fg"] = None
            elif 30 <= c <= 37 or 90 <= c <= 97:
                state["fg"] = c
    span(text[pos:])
    return ("<!doctype html><meta charset=utf-8><title>" + html.escape(title) + "</title>"
            "<style>body{margin:0;background:#1e2127}pre{margin:0;padding:12px;"
            "font:14px/1.25 'DejaVu Sans Mono',monospace;color:#dcdfe4}</style><pre>" +
            "".join(out) + "</pre>")


def capture(sock: str, command: str, width: int, height: int, wait_for: str, keys=()) -> str:
    tmux = ["tmux", "-S", sock]
    subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL)
    subprocess.run(tmux + ["-f", "/dev/null", "new-session", "-d", "-s", "v", "-x", str(width),
                           "-y", str(height), command], check=True)
    screen = ""
    for _ in range(150):
        screen = subprocess.run(tmux + ["capture-pane", "-p", "-t", "v"], capture_output=True,
                                text=True).stdout
        if wait_for in screen:
            break
        time.sleep(0.1)
    else:
        raise SystemExit(f"the screen never showed {wait_for!r}:\n{screen}")
    time.sleep(2.5)  # a few refreshes: sparklines and interval shares
    for k in keys:
        subprocess.run(tmux + ["send-keys", "-t", "v", k], check=True)
        time.sleep(0.5)
    shot = subprocess.run(tmux + ["capture-pane", "-e", "-p", "-t", "v"], capture_output=True,
                          text=True, check=True).stdout
    subprocess.run(tmux + ["send-keys", "-t", "v", "q"])
    time.sleep(0.3)
    subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL)
    return shot


def shoot(page: pathlib.Path, png: pathlib.Path, width: int, height: int) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        raise SystemExit("no chromium to take the pictures with")
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--window-size={width},{height}", f"--screenshot={png}", page.as_uri()],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> int:
    build = pathlib.Path(sys.argv[1]).resolve()
    out = pathlib.Path(sys.argv[2]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    mb = build / "src/cli/mainboard"
    env = (f"MAINBOARD_LOG=error MAINBOARD_NVML_LIBRARY={build}/tests/fakes/fake_nvml/libnvidia-ml.so.1 "
           f"MAINBOARD_FAKE_GPU_SCENARIO={ROOT}/tests/fixtures/gpus/h100x8.json TERM=xterm-256color")
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "tmux.sock")
        shutil.copy(ROOT / "tests/tui/busy.py", os.path.join(tmp, "train.py"))
        busy = subprocess.Popen([sys.executable, "train.py", "0"], cwd=tmp)
        try:
            time.sleep(1)
            top = capture(sock, f"env {env} {mb} --color always top --interval 0.5", 120, 34,
                          "GPU7")
            prof = capture(sock, f"env TERM=xterm-256color {mb} --color always profile top "
                                 f"--interval 0.5 {busy.pid}", 120, 24, "hot (")
        finally:
            busy.kill()
            busy.wait()
    for name, shot, size in (("top", top, (1000, 660)), ("profile-top", prof, (1000, 480))):
        page = out / f"{name}.html"
        page.write_text(to_html(shot, name))
        shoot(page, out / f"{name}.png", *size)
        print(f"{out / (name + '.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
