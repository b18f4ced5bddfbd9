#!/usr/bin/env python3
"""The notebooks published as HTML under docs/notebooks/, and the stamp that says whether
they are stale. scripts/notebooks-html.sh runs the notebooks (scripts/run-notebooks.sh) and
then `publish`; tests/it/notebook_pages.rs runs `check`.

    notebooks-html.py notebooks [NAME...]     the .ipynb of the pages (all, or those named)
    notebooks-html.py publish DIR [NAME...]   DIR/NAME.ipynb (executed) -> docs/notebooks/NAME.html,
                                              then docs/notebooks/SOURCES.sha256 and README.md
    notebooks-html.py check [--root ROOT]     exit 1 naming each stale page and what changed
    notebooks-html.py inputs                  every path the stamp covers (for the test's copy)
    notebooks-html.py compare DIR             exit 1 naming each code cell whose output in
                                              DIR/NAME.ipynb (a fresh run) differs from its page's

A page is stale when any of its inputs hashes differently from the stamp:
- its notebook: the cells' types and sources only (not outputs, execution counts or
  metadata, so running a notebook in place does not make its page stale);
- every data input it reads: each committed bundle directory (all its files) and the
  experiment YAML and published CSVs it loads;
- the code that renders notebook output, shared by all pages (RENDER below): the evcxr
  display (src/display.rs: frames as HTML tables, charts as SVG), the charts (src/plot/),
  and this script with its template (they make the HTML);
- the page itself (an edited or half-written page is stale too).
What the analysis computes (src/analysis/, the claims) is not in the stamp: a change there
that moves a number shows in the outputs instead. `publish` also writes
docs/notebooks/OUTPUTS.sha256, one sha256 per code cell of the outputs it shows (their
kinds, texts and rich data; not execution counts or metadata), and `compare` recomputes
them on the notebooks scripts/run-notebooks.sh has just executed (scripts/test.sh runs it
after that run, so CI executes each notebook once). Cells tagged `host-dependent` (the
doctor's findings, the kernels installed: they differ from machine to machine) are left out.
Stamp lines are `<sha256>  <page>  <input>`; the hash of a directory is the sha256 of its
listing, `<sha256>  <path>\\n` per file (sha256sum's format), sorted by path in byte order.
"""
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = "docs/notebooks"
STAMP = f"{OUT}/SOURCES.sha256"
OUTPUTS = f"{OUT}/OUTPUTS.sha256"
HOST_DEPENDENT = "host-dependent"
INDEX = f"{OUT}/README.md"
TEMPLATE = "scripts/notebooks-html"
REGENERATE = "bash scripts/notebooks-html.sh"

# The published pages: the three seed notebooks, and kernels.ipynb, which also opens a
# committed bundle. getting-started.ipynb and fio.ipynb are not published: they run their
# experiment on the machine at hand (no committed bundle), so a page of theirs would show
# one machine's run that no reader can check against the repository.
PAGES = {
    "xfs-parent-pointers": {
        "title": "XFS parent pointers under fsstress (seed 000)",
        "bundles": ["data/reruns/000"],
        "data": [
            "experiments/xfs-parent-pointers.yaml",
            "data/published/000_xfs_parent_pointers.csv",
        ],
    },
    "ext-fsck-small-files": {
        "title": "e2fsck on many small files, ext3 against ext4 (seed 001)",
        "bundles": [
            "data/reruns/001",
            "data/reruns/001-size-2GiB",
            "data/reruns/001-size-4GiB",
            "data/reruns/001-size-8GiB",
            "data/reruns/001-size-16GiB",
        ],
        "data": [
            "experiments/ext-fsck-small-files.yaml",
            "data/published/001_ext_fsck_small_files.csv",
            "data/published/001_dir_blocks.csv",
        ],
    },
    "xfs-rt-truncate": {
        "title": "Truncating files on the XFS realtime device (seed 003)",
        "bundles": ["data/reruns/003"],
        "data": [
            "experiments/xfs-rt-truncate.yaml",
            "data/published/003_xfs_rt_truncate.csv",
        ],
    },
    "kernels": {
        "title": "fs_mark on the host kernel and two User-Mode Linux guest kernels",
        "bundles": ["data/reruns/kernels"],
        "data": ["experiments/kernels.yaml"],
    },
}

# The code that renders notebook output into a page, shared by every page.
RENDER = [
    "src/display.rs",
    "src/plot",
    "scripts/notebooks-html.py",
    TEMPLATE,
]


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def file_hash(root, rel):
    with open(os.path.join(root, rel), "rb") as f:
        return sha256(f.read())


def tree_hash(root, rel):
    """A file's sha256, or a directory's: the sha256 of its sha256sum-style listing."""
    path = os.path.join(root, rel)
    if os.path.isfile(path):
        return file_hash(root, rel)
    if not os.path.isdir(path):
        return None
    files = []
    for d, dirs, names in os.walk(path):
        dirs.sort()
        for n in names:
            files.append(os.path.relpath(os.path.join(d, n), path))
    files.sort(key=lambda p: p.encode())
    listing = "".join(f"{file_hash(path, p)}  {p}\n" for p in files)
    return sha256(listing.encode())


def cells_hash(root, rel):
    """The notebook's cells, type and source only (outputs and metadata left out)."""
    try:
        nb = json.load(open(os.path.join(root, rel)))
    except (OSError, ValueError):
        return None
    parts = []
    for c in nb.get("cells", []):
        src = c.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        parts.append(f"{c.get('cell_type')}\n{src}\n\0")
    return sha256("".join(parts).encode())


def notebook_of(name):
    return f"notebooks/{name}.ipynb"


def page_of(name):
    return f"{OUT}/{name}.html"


def inputs(name):
    """(kind, path) of everything a page is made from, the page itself excluded."""
    p = PAGES[name]
    return (
        [("notebook", notebook_of(name))]
        + [("bundle", b) for b in p["bundles"]]
        + [("data", d) for d in p["data"]]
        + [("code", c) for c in RENDER]
    )


def hashes(root, name):
    """{input path: sha256 or None (missing)} for a page, the page itself included."""
    out = {}
    for kind, rel in inputs(name):
        out[rel] = cells_hash(root, rel) if kind == "notebook" else tree_hash(root, rel)
    out[page_of(name)] = tree_hash(root, page_of(name))
    return out


def read_stamp(root):
    """{page name: {input: sha256}}; a missing stamp is an empty one."""
    stamp = {}
    try:
        lines = open(os.path.join(root, STAMP)).read().splitlines()
    except OSError:
        return stamp
    for n, line in enumerate(lines, 1):
        if not line or line.startswith("#"):
            continue
        fields = line.split("  ")
        if len(fields) != 3:
            raise SystemExit(f"{STAMP}:{n}: expected `<sha256>  <page>  <input>`, got {line!r}")
        digest, page, rel = fields
        stamp.setdefault(page, {})[rel] = digest
    return stamp


def write_stamp(root, stamp):
    lines = [
        f"# What each page of {OUT}/ was made from: `<sha256>  <page>  <input>`.",
        f"# Written by {REGENERATE}; checked by tests/it/notebook_pages.rs",
        "# (scripts/notebooks-html.py says how each input is hashed).",
    ]
    for page in sorted(stamp):
        for rel, digest in stamp[page].items():
            lines.append(f"{digest}  {page}  {rel}")
    with open(os.path.join(root, STAMP), "w") as f:
        f.write("\n".join(lines) + "\n")


# Literal paths a code cell opens relative to notebooks/ ("../data/reruns/000", a
# format string's fixed prefix "../data/reruns/001-size-").
OPENED = re.compile(r'"\.\./((?:data|experiments)/[^"{}]*)')


def undeclared(root, name):
    """Data paths the notebook's code opens that are not among the page's inputs."""
    try:
        nb = json.load(open(os.path.join(root, notebook_of(name))))
    except (OSError, ValueError):
        return []
    declared = PAGES[name]["bundles"] + PAGES[name]["data"]
    missing = []
    for c in nb.get("cells", []):
        if c.get("cell_type") != "code":
            continue
        src = c.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        for rel in OPENED.findall(src):
            if not any(d == rel or d.startswith(rel) for d in declared) and rel not in missing:
                missing.append(rel)
    return missing


def check(root):
    stamp = read_stamp(root)
    stale = []
    for name in PAGES:
        page = page_of(name)
        problems = []
        if not os.path.isfile(os.path.join(root, page)):
            problems.append(f"{page} does not exist")
        recorded = stamp.get(page)
        if recorded is None:
            problems.append(f"{STAMP} has no line for {page}")
        else:
            for rel, digest in hashes(root, name).items():
                if digest is None:
                    problems.append(f"{rel} is missing")
                elif rel not in recorded:
                    problems.append(f"{rel} is not in the stamp (a new input)")
                elif recorded[rel] != digest:
                    what = "was edited" if rel == page else "changed"
                    problems.append(f"{rel} {what} since the page was made")
            now = {rel for _, rel in inputs(name)} | {page}
            for rel in recorded:
                if rel not in now:
                    problems.append(f"{rel} is in the stamp but no longer an input")
        if page not in read_outputs(root):
            problems.append(f"{OUTPUTS} has no line for {page}")
        for rel in undeclared(root, name):
            problems.append(
                f"{notebook_of(name)} opens ../{rel}, which is not among the page's inputs "
                "(add it to PAGES in scripts/notebooks-html.py)"
            )
        if problems:
            stale.append(name)
            print(f"{page} is stale:")
            for p in problems:
                print(f"  - {p}")
    index = os.path.join(root, INDEX)
    text = open(index).read() if os.path.isfile(index) else ""
    for name in PAGES:
        if f"({name}.html)" not in text:
            print(f"{INDEX} does not link {name}.html")
            stale.append(name)
    if stale:
        names = " ".join(sorted(set(stale)))
        print(f"regenerate with: {REGENERATE} {names}  (or {REGENERATE} for all pages)")
        return 1
    print(f"{OUT}: {len(PAGES)} pages up to date with their notebooks, bundles and code")
    return 0


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def content_hash(root, bundle):
    """`fslab reply`'s content hash of a bundle (fslab::store::content_hash): inside the bundle,
    sha256sum manifest.json experiment.yaml runs.jsonl *.parquet | LC_ALL=C sort -k2 | sha256sum"""
    d = os.path.join(root, bundle)
    names = [n for n in ("manifest.json", "experiment.yaml", "runs.jsonl") if os.path.isfile(os.path.join(d, n))]
    names += [n for n in os.listdir(d) if n.endswith(".parquet") and not n.startswith(".")]
    names.sort(key=lambda n: n.encode())
    return sha256("".join(f"{file_hash(d, n)}  {n}\n" for n in names).encode())


def export(executed, dest):
    """The executed notebook as one self-contained HTML page: nbconvert's lab template with
    the require.js and MathJax script tags left out (the notebooks need neither; a page
    must not load anything to show its charts), SVG charts as data: images."""
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    c = Config()
    c.HTMLExporter.extra_template_basedirs = [os.path.join(ROOT, TEMPLATE)]
    c.HTMLExporter.template_name = "fslab"
    c.HTMLExporter.embed_images = True
    body, _ = HTMLExporter(config=c).from_filename(executed)
    # The executed copy ran in notebooks/; a path of this checkout means nothing elsewhere.
    body = body.replace(ROOT + "/", "")
    with open(dest, "w") as f:
        f.write(body)


def text_of(v):
    return "".join(v) if isinstance(v, list) else (v or "")


def output_hashes(executed):
    """{"cell N": sha256} over the outputs each code cell shows, host-dependent cells left
    out; N counts code cells from 1 (as `fslab notebook run --timing` does)."""
    nb = json.load(open(executed))
    out = {}
    n = 0
    for c in nb.get("cells", []):
        if c.get("cell_type") != "code":
            continue
        # The injected-parameters cell of a parameterised run is not the notebook's own.
        if "injected-parameters" in c.get("metadata", {}).get("tags", []):
            continue
        n += 1
        if HOST_DEPENDENT in c.get("metadata", {}).get("tags", []):
            continue
        parts = []
        for o in c.get("outputs", []):
            kind = o.get("output_type", "")
            if kind == "stream":
                parts.append(f"{kind}:{o.get('name')}\n{text_of(o.get('text'))}")
            elif kind in ("display_data", "execute_result"):
                for mime in sorted(o.get("data", {})):
                    parts.append(f"{mime}\n{text_of(o['data'][mime])}")
            elif kind == "error":
                parts.append(f"error\n{o.get('ename')}: {o.get('evalue')}")
        body = "\0".join(parts).replace(ROOT + "/", "")
        out[f"cell {n}"] = sha256(body.encode())
    return out


def read_outputs(root):
    got = {}
    try:
        lines = open(os.path.join(root, OUTPUTS)).read().splitlines()
    except OSError:
        return got
    for line in lines:
        if line and not line.startswith("#"):
            digest, page, cell = line.split("  ")
            got.setdefault(page, {})[cell] = digest
    return got


def write_outputs(root, outputs):
    lines = [
        f"# The outputs of each code cell of the pages of {OUT}/: `<sha256>  <page>  cell N`.",
        f"# Written by {REGENERATE}; `python3 scripts/notebooks-html.py compare target/notebooks`",
        f"# (scripts/test.sh) compares a fresh run with them; cells tagged {HOST_DEPENDENT} are left out.",
    ]
    for page in sorted(outputs):
        for cell, digest in outputs[page].items():
            lines.append(f"{digest}  {page}  {cell}")
    with open(os.path.join(root, OUTPUTS), "w") as f:
        f.write("\n".join(lines) + "\n")


def compare(executed_dir):
    recorded = read_outputs(ROOT)
    differ = []
    for name in PAGES:
        executed = os.path.join(executed_dir, f"{name}.ipynb")
        if not os.path.isfile(executed):
            continue
        page = page_of(name)
        want = recorded.get(page, {})
        now = output_hashes(executed)
        cells = [c for c in now if want.get(c) != now[c]] + [c for c in want if c not in now]
        if cells:
            differ.append(name)
            print(f"{page}: the output of {', '.join(cells)} differs from this run's ({executed})")
    if differ:
        print(
            "the code that computes these outputs changed since the pages were made (the stamp "
            f"covers only their inputs and the rendering); regenerate with: {REGENERATE} {' '.join(differ)}"
        )
        return 1
    print(f"{OUT}: the outputs of a fresh run match the pages")
    return 0


def publish(executed_dir, names):
    root = ROOT
    os.makedirs(os.path.join(root, OUT), exist_ok=True)
    stamp = read_stamp(root)
    outputs = read_outputs(root)
    for kept in (stamp, outputs):
        for page in list(kept):
            if page not in {page_of(n) for n in PAGES}:
                del kept[page]
    for name in names:
        executed = os.path.join(executed_dir, f"{name}.ipynb")
        export(executed, os.path.join(root, page_of(name)))
        stamp[page_of(name)] = hashes(root, name)
        outputs[page_of(name)] = output_hashes(executed)
        print(f"notebooks-html: {page_of(name)} ({os.path.getsize(os.path.join(root, page_of(name))) // 1024} KiB)")
    write_stamp(root, stamp)
    write_outputs(root, outputs)
    write_index(root, names)


def write_index(root, names):
    """docs/notebooks/README.md: each page, the bundles it shows, and what made it. A line
    per page is kept from the previous index when only some pages were regenerated."""
    old = {}
    path = os.path.join(root, INDEX)
    if os.path.isfile(path):
        for line in open(path).read().splitlines():
            m = re.match(r"^\| \[[^]]*\]\(([^)]+)\.html\)", line)
            if m:
                old[m.group(1)] = line
    commit = git("rev-parse", "--short=12", "HEAD")
    dirty = git("status", "--porcelain", "--", "src", "notebooks", "data", "experiments", "scripts", "Cargo.lock")
    made_by = f"fslab {commit}" + (" + uncommitted changes" if dirty else "")
    day = datetime.date.today().isoformat()
    try:
        import nbconvert

        tools = f"nbconvert {nbconvert.__version__}"
    except ImportError:
        tools = "nbconvert"
    installed = subprocess.run(["cargo", "install", "--list"], capture_output=True, text=True).stdout
    evcxr = re.search(r"^evcxr_jupyter (v\S+):", installed, re.M)
    if evcxr:
        tools += f", evcxr_jupyter {evcxr.group(1)}"
    rows = []
    for name in PAGES:
        if name not in names and name in old:
            rows.append(old[name])
            continue
        if not os.path.isfile(os.path.join(root, page_of(name))):
            rows.append(f"| {PAGES[name]['title']} (not made yet: `{REGENERATE} {name}`) | | | | |")
            continue
        p = PAGES[name]
        bundles = "<br>".join(
            f"`{b}` (content hash `{content_hash(root, b)[:16]}`)" for b in p["bundles"]
        )
        size = os.path.getsize(os.path.join(root, page_of(name))) // 1024
        rows.append(
            f"| [{p['title']}]({name}.html) | [`{notebook_of(name)}`](../../{notebook_of(name)}) "
            f"| {bundles} | {made_by}, {day}, {tools} | {size} KiB |"
        )
    text = f"""# Notebooks as pages

Each page is a notebook of `notebooks/` executed on its committed bundle and saved as one
self-contained HTML file (tables and SVG charts inline; no script to load, nothing to run),
so that a reader on the web sees the charts as the notebook shows them.

| page | notebook | bundles it opens | made by | size |
|---|---|---|---|---|
{chr(10).join(rows)}

A content hash (its first 16 hex digits here) is the one `fslab reply` prints for the bundle (inside it:
`sha256sum manifest.json experiment.yaml runs.jsonl *.parquet | LC_ALL=C sort -k2 | sha256sum`).
Output that depends on the machine that made the page (the doctor's findings, the kernels
installed) is that machine's, as in any executed notebook.

**Regenerate** (real Jupyter with the evcxr kernel, minutes): `{REGENERATE}` for every page,
`{REGENERATE} NAME…` for some. It writes the pages, this index and `SOURCES.sha256`: the
sha256 of each page's inputs (the notebook's cells, the bundles and data files it opens, the
code that renders notebook output: `src/display.rs`, `src/plot/`, the script and its
template). `tests/it/notebook_pages.rs` recomputes them, so CI fails while a page is stale
and names it (`python3 scripts/notebooks-html.py check` does the same by hand). What the
analysis computes is not among those inputs: `OUTPUTS.sha256` holds a sha256 of each code
cell's outputs, and after CI's run of the notebooks (`scripts/test.sh`) `python3
scripts/notebooks-html.py compare target/notebooks` fails naming a cell whose output is no
longer the page's (cells tagged `host-dependent`, such as the doctor's, are left out).
`getting-started.ipynb` and `fio.ipynb` have no page: they run their experiment on the
machine at hand rather than open a committed bundle.
"""
    with open(path, "w") as f:
        f.write(text)


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    cmd, rest = argv[0], argv[1:]
    if cmd == "notebooks":
        names = rest or list(PAGES)
        for n in names:
            if n not in PAGES:
                raise SystemExit(f"notebooks-html: no page {n!r}; pages: {', '.join(PAGES)}")
        print(" ".join(notebook_of(n) for n in names))
        return 0
    if cmd == "publish":
        if not rest:
            raise SystemExit("notebooks-html: publish DIR [NAME...]")
        publish(rest[0], rest[1:] or list(PAGES))
        return 0
    if cmd == "check":
        root = ROOT
        if rest[:1] == ["--root"] and len(rest) == 2:
            root = rest[1]
        elif rest:
            raise SystemExit("notebooks-html: check [--root ROOT]")
        return check(root)
    if cmd == "compare":
        if len(rest) != 1:
            raise SystemExit("notebooks-html: compare DIR")
        return compare(rest[0])
    if cmd == "inputs":
        seen = []
        for name in PAGES:
            for _, rel in inputs(name):
                if rel not in seen:
                    seen.append(rel)
            seen.append(page_of(name))
        print("\n".join(seen + [STAMP, OUTPUTS, INDEX]))
        return 0
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
