#!/bin/sh
# Regenerates docs/man/blesend.1 and docs/man/blerecv.1:
#   1. swift-argument-parser's generate-manual writes the pages from the programs' --help;
#   2. its placeholder EXIT STATUS section (.Ex -std) gives way to ENVIRONMENT, FILES and EXIT
#      STATUS built from the code's tables (ManualSections, printed by blesend-labcheck), so the
#      pages cannot drift from the programs (Tests/CLITests/ManualPageTests.swift compares them).
# generate-manual drops every character outside ASCII (✓ ✗ … →): it is handed the help with each
# such character as @uXXXX@, which then becomes the groff escape \[uXXXX].
#   scripts/man.sh [DATE]      DATE (YYYY-MM-DD) for .Dd, default today
set -eu
cd "$(dirname "$0")/.."
date=${1:-$(date +%Y-%m-%d)}
swift build --product blesend >/dev/null
swift build --product blerecv >/dev/null
swift build --product blesend-labcheck >/dev/null
swift build --product generate-manual >/dev/null   # the dependency's executable target
bin=$(swift build --show-bin-path)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for tool in blesend blerecv; do
  mkdir -p "$tmp/bin" "$tmp/out"
  cat >"$tmp/bin/$tool" <<WRAP
#!/bin/sh
"$bin/$tool" "\$@" | perl -CS -pe 's/([^\\x00-\\x7f])/sprintf("\\@u%04X\\@", ord(\$1))/ge'
WRAP
  chmod +x "$tmp/bin/$tool"
  "$bin/generate-manual" "$tmp/bin/$tool" --authors "blesend developers" --date "$date" -o "$tmp/out"
  "$bin/blesend-labcheck" manual-sections "$tool" >"$tmp/sections"
  perl -pe 's/\@u([0-9A-F]{4,})\@/\\[u$1]/g' "$tmp/out/$tool.1" | awk -v sections="$tmp/sections" '
    /^\.Sh "EXIT STATUS"$/ { while ((getline line < sections) > 0) print line; skip = 1; next }
    skip && /^\.Ex -std$/ { skip = 0; next }
    { print }' >"docs/man/$tool.1"
  grep -q '^\.Sh ENVIRONMENT$' "docs/man/$tool.1" || { echo "man.sh: no ENVIRONMENT section in $tool.1 (generate-manual changed?)" >&2; exit 1; }
done
echo "docs/man: blesend.1 and blerecv.1 regenerated"
