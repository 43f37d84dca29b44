#!/bin/sh
# Builds the controller's wheel (ryu-app/pyproject.toml) into OUTDIR, from a
# copy of ryu-app/ whose links (the switch's tables in defs/, openapi.yaml)
# are the files themselves, with Debian's Python, setuptools and wheel.
#
# usage: packages/build-wheel.sh OUTDIR
set -eu

out=${1:?usage: build-wheel.sh OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -rL "$top/ryu-app/." "$copy"
find "$copy" -name __pycache__ -prune -exec rm -rf {} +
/usr/bin/python3 -m pip wheel -q --no-deps --no-build-isolation \
    --disable-pip-version-check -w "$out" "$copy"
