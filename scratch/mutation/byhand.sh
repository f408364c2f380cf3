#!/usr/bin/env bash
# Applies one mutant by hand (the first occurrence of <old> in <file> becomes <new>), runs the given
# test files, restores the file, and says whether the tests killed it. For the static mutants the
# runner ignores (see README.md). Usage:
#   bash scratch/mutation/byhand.sh <file> <old> <new> <test file>...
set -uo pipefail
file=$1 old=$2 new=$3
shift 3
cp "$file" "$file.byhand"
trap 'mv "$file.byhand" "$file"' EXIT
OLD=$old NEW=$new npx node -e '
const fs = require("node:fs"), f = process.argv[1], s = fs.readFileSync(f, "utf8")
if (!s.includes(process.env.OLD)) { console.error("not found: " + process.env.OLD); process.exit(2) }
fs.writeFileSync(f, s.replace(process.env.OLD, () => process.env.NEW))
' "$file" || exit 2
if npx vitest run "$@" > /tmp/byhand.$$.log 2>&1; then
  echo "SURVIVED: $old -> $new"
else
  echo "killed ($(grep -Eo '[0-9]+ failed' /tmp/byhand.$$.log | head -1)): $old -> $new"
fi
rm -f /tmp/byhand.$$.log
