#!/usr/bin/env bash
# Build the fslab library that the notebooks link against, or find it up to date.
#
# evcxr compiles every cell into its own shared object. With `:dep fslab` each of them
# linked fslab and polars in statically (seconds per cell), and evcxr's embedded
# rust-analyzer parsed fslab's whole dependency tree, polars included, in every new
# kernel (most of a minute). Instead, the first cell of each notebook runs this script and
# passes fslab to rustc directly (`:build_env RUSTFLAGS=… --extern fslab=…`):
# - cargo builds fslab's rlib as usual (the same build as `cargo build`, nothing extra);
# - rustc links it, with all its dependencies, into one Rust dylib,
#   target/evcxr/fslab/libfslab_notebook.so (a crate that is only `pub use fslab::*;`),
#   against which each cell links in a fraction of a second;
# - target/evcxr/fslab/deps points at cargo's deps directory (the crates' metadata).
# notebooks/evcxr.toml pins evcxr's build directory to target/evcxr, so that the first
# cells can name these paths relative to it.
#
# Output goes to stdout only: the notebook runners treat anything on stderr as an error.
set -euo pipefail
exec 2>&1
cd "$(dirname "$0")/.."
out=target/evcxr/fslab
cargo build --locked --quiet --lib
target=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
rlib=$target/debug/libfslab.rlib
lib=$out/libfslab_notebook.so
mkdir -p "$out"
ln -sfn "$target/debug/deps" "$out/deps.new" && mv -T "$out/deps.new" "$out/deps"
# Up to date when linked from this very rlib (path, size, modification time).
stamp="$rlib $(stat -Lc '%s %Y' "$rlib")"
if [ -e "$lib" ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
echo "notebook-lib: linking $lib (fslab and its dependencies in one shared library)"
# -C prefer-dynamic: std as a shared library too, as evcxr links the cells.
# Linked in a directory of its own and then moved, so that a kernel that has the old one
# loaded keeps it (and its file name is its soname).
rm -rf "$out/new" && mkdir "$out/new"
echo 'pub use fslab::*;' |
  rustc --edition 2021 --crate-type dylib --crate-name fslab_notebook -C prefer-dynamic \
    -C strip=debuginfo --extern fslab="$rlib" -L dependency="$target/debug/deps" \
    -o "$out/new/libfslab_notebook.so" -
mv "$out/new/libfslab_notebook.so" "$lib"
rmdir "$out/new"
echo "$stamp" >"$out/stamp"
