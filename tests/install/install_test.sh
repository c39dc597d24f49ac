#!/usr/bin/env bash
# The outside-project check: installs the build into a scratch prefix, proves every
# installed header sits under the one project prefix (include/ledger/), then builds
# tests/install/consumer against it with find_package(ledger) and runs what it built.
#
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
source_dir=$2
scratch=$(mktemp -d /tmp/ledger-install.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
top_level=$(ls "$scratch/prefix/include")
if [[ "$top_level" != "ledger" ]]; then
  echo "install test: headers outside include/ledger/: $(echo "$top_level" | tr '\n' ' ')" >&2
  exit 1
fi
for folder in base idempotency ledger engines; do
  [[ -d "$scratch/prefix/include/ledger/$folder" ]] || { echo "install test: no include/ledger/$folder" >&2; exit 1; }
done

cmake -S "$source_dir/tests/install/consumer" -B "$scratch/consumer" \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" -DLEDGER_EXAMPLE_SOURCE="$source_dir/docs/example.cc" >/dev/null
cmake --build "$scratch/consumer" -j "$(nproc)" >/dev/null
"$scratch/consumer/example" >/dev/null
"$scratch/consumer/open_by_url" "memory:"
"$scratch/consumer/open_by_url" "sqlite:$scratch/ledger.db"
echo "install test: OK (find_package, build and run outside the tree)"
