#!/usr/bin/env python3
"""Check executed notebooks: no error outputs, every code cell ran, nothing on stderr (evcxr
prints an error a cell returns with `?` there instead of raising it), and the rich outputs
each notebook promises (HTML tables, inline SVG charts) are really there."""
import json
import sys

# Notebook file name -> mime types that must appear among its outputs.
REQUIRED = {
    "getting-started.ipynb": ["text/html", "image/svg+xml"],
    "xfs-parent-pointers.ipynb": ["text/html", "image/svg+xml"],
    "ext-fsck-small-files.ipynb": ["text/html", "image/svg+xml"],
    "xfs-rt-truncate.ipynb": ["text/html", "image/svg+xml"],
    "fio.ipynb": ["text/html", "image/svg+xml"],
    "kernels.ipynb": ["text/html", "image/svg+xml"],
}

failed = False
for path in sys.argv[1:]:
    failed_before, failed = failed, False
    nb = json.load(open(path))
    mimes = set()
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        if cell.get("execution_count") is None:
            print(f"{path}: code cell {i} did not run")
            failed = True
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                print(f"{path}: cell {i} raised {out.get('ename')}: {out.get('evalue')}")
                failed = True
            if out.get("name") == "stderr":
                text = "".join(out.get("text", [])).strip()
                what = "panicked" if "panicked" in text else "wrote to stderr (an error it returned?)"
                print(f"{path}: cell {i} {what}: {text[:500]}")
                failed = True
            mimes.update(out.get("data", {}).keys())
    name = path.rsplit("/", 1)[-1]
    for m in REQUIRED.get(name, []):
        if m not in mimes:
            print(f"{path}: no {m} output (found {sorted(mimes)})")
            failed = True
    print(f"{path}: {'FAILED' if failed else 'ok'} ({len(mimes)} output kinds)")
    failed = failed or failed_before
sys.exit(1 if failed else 0)
