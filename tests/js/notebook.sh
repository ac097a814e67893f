#!/usr/bin/env bash
# A notebook that profiles, as its users run and share it: executed by Jupyter's own kernel and
# nbconvert (Debian's python3-ipykernel and python3-nbconvert), exported as HTML, and that export
# looked at in headless Chromium (notebook_check.mjs). Exits 77 (skipped) without them.
#   notebook.sh SOURCE_DIR WORK_DIR PYTHONPATH
set -euo pipefail
src=$(realpath "$1") work=$(realpath -m "$2") package=$(realpath "$3")
python=/usr/bin/python3
if ! "$python" -c 'import ipykernel, nbconvert, nbformat' 2>/dev/null; then
  echo "notebook: no Jupyter kernel or nbconvert here (python3-ipykernel, python3-nbconvert)" >&2
  exit 77
fi
"$src/install.sh" "$src" "$work"
cd "$work"
rm -f notebook.ipynb notebook.executed.ipynb notebook.html
"$python" - "$src/pictures_work.py" <<'PY'
import sys
import nbformat

work = sys.argv[1]
cells = [
    # Spans in the kernel: the cell runs as an asyncio task of ipykernel.
    "import sys, mainboard\n"
    "with mainboard.Profiler() as prof:\n"
    "    with mainboard.span('step'):\n"
    "        sum(i * i for i in range(300000))\n"
    "p = prof.result()\n"
    "p",
    "p.report()",
    # A program sampled from the notebook: its page, a frame below the first.
    f"run = mainboard.Profiler.run(sys.executable, args=[{work!r}], timeout=120)\nrun",
]
notebook = nbformat.v4.new_notebook()
notebook.cells = [nbformat.v4.new_code_cell(c) for c in cells]
nbformat.write(notebook, "notebook.ipynb")
PY
export PYTHONPATH=$package
"$python" -m nbconvert --to notebook --execute notebook.ipynb --output notebook.executed.ipynb \
  --ExecutePreprocessor.timeout=300 2>nbconvert.log || { cat nbconvert.log >&2; exit 1; }
"$python" -m nbconvert --to html notebook.executed.ipynb --output notebook.html 2>>nbconvert.log ||
  { cat nbconvert.log >&2; exit 1; }
exec node "$work/notebook_check.mjs" "$work"
