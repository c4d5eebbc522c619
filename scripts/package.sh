#!/usr/bin/env bash
# Builds the Debian package blesend_<version>_amd64.deb from this checkout with Debian's own tools:
# static release binaries (--static-swift-stdlib, in .build-static so the debug build is untouched),
# dependencies from dpkg-shlibdeps, dpkg-deb --build --root-owner-group, then lintian (no errors).
#
#   scripts/package.sh [--output DIR] [--no-lintian]
#
# The version is BlesendVersion.release in Sources/BlesendCLI/Version.swift (the binaries print
# the same with --version; this script checks they agree). The last line on stdout is the path
# of the .deb. Packaging files: packaging/. Needs a Swift 6 toolchain on PATH; as root it installs
# the Debian packages it needs (dpkg-dev, lintian, libsodium-dev, libdbus-1-dev, libzstd-dev, pkg-config).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

output=$repo
lintian=1
while [ $# -gt 0 ]; do
  case "$1" in
    --output) output=$(cd "$2" && pwd); shift 2 ;;
    --no-lintian) lintian=0; shift ;;
    -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "package: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done
log() { echo "package: $*" >&2; }

need=(dpkg-dev libsodium-dev libdbus-1-dev libzstd-dev pkg-config binutils)
[ "$lintian" = 1 ] && need+=(lintian)
if ! dpkg -s "${need[@]}" >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    log "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    log "error: missing Debian packages; run: sudo apt-get install --no-install-recommends ${need[*]}"
    exit 1
  fi
fi
command -v swift >/dev/null || { log "error: no swift on PATH (a Swift 6 toolchain, swift.org)"; exit 1; }

version=$(sed -n 's/^ *public static let release = "\([^"]*\)".*/\1/p' Sources/BlesendCLI/Version.swift)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { log "error: no release version in Sources/BlesendCLI/Version.swift"; exit 1; }
arch=$(dpkg --print-architecture)
protocol=$(sed -n 's/.*static let protocolVersion: UInt8 = \([0-9]*\).*/\1/p' Sources/BlueZ/BlesendGATT.swift)
grep -q "^blesend ($version)" packaging/changelog ||
  { log "error: packaging/changelog has no entry for $version at the top; add one"; exit 1; }
# Reproducible: every timestamp is the last commit's (dpkg-deb reads SOURCE_DATE_EPOCH too).
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

# 1. Static release binaries, in their own scratch path.
scratch=.build-static
log "building blesend and blerecv $version (release, static Swift stdlib, $scratch)"
scripts/build-static.sh >&2
bin=$scratch/release
for tool in blesend blerecv; do
  got=$("$bin/$tool" --version)
  [ "$got" = "$tool $version (protocol $protocol)" ] ||
    { log "error: $tool --version says '$got', expected '$tool $version (protocol $protocol)'"; exit 1; }
done

# 2. The tree, as installed.
stage=$scratch/deb
root=$stage/blesend_${version}_${arch}
rm -rf "$stage"
mkdir -p "$root"
inst() { install -D -m "$1" "$2" "$root/$3"; }
gz() { gzip -9n <"$1" >"$1.gz.tmp"; install -D -m 0644 "$1.gz.tmp" "$root/$2"; rm -f "$1.gz.tmp"; }

for tool in blesend blerecv; do
  inst 0755 "$bin/$tool" "usr/bin/$tool"
  # As dh_strip does; the Swift metadata sections the runtime needs are not debug sections.
  strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/$tool"
  "$root/usr/bin/$tool" --version >/dev/null
  # swift-argument-parser's generate-manual keeps the blank lines of a discussion, which groff
  # (and lintian) warn about; .Pp is the same paragraph break in mdoc.
  sed 's/^$/.Pp/' "docs/man/$tool.1" >"$stage/$tool.1"
  gz "$stage/$tool.1" "usr/share/man/man1/$tool.1.gz"
  # bash-completion sources the file: no #! line (lintian: bash-completion-with-hashbang).
  "$root/usr/bin/$tool" --generate-completion-script bash | sed '1{/^#!/d}' >"$stage/$tool.bash"
  "$root/usr/bin/$tool" --generate-completion-script zsh >"$stage/_$tool"
  "$root/usr/bin/$tool" --generate-completion-script fish >"$stage/$tool.fish"
  inst 0644 "$stage/$tool.bash" "usr/share/bash-completion/completions/$tool"
  inst 0644 "$stage/_$tool" "usr/share/zsh/vendor-completions/_$tool"
  inst 0644 "$stage/$tool.fish" "usr/share/fish/vendor_completions.d/$tool.fish"
done

doc=usr/share/doc/blesend
for file in README.md docs/protocol.md docs/threat-model.md docs/json-events.md; do
  name=$(basename "$file")
  # Policy 12.3, as dh_compress: documentation over 4 kB is gzipped.
  if [ "$(stat -c %s "$file")" -gt 4096 ]; then gz "$file" "$doc/$name.gz"; else inst 0644 "$file" "$doc/$name"; fi
done
# The --json schema is data that programs read (docs/json-events.md), not documentation text: it
# goes, uncompressed, to the package's own folder (policy 12.3 would gzip it under /usr/share/doc).
inst 0644 docs/json-events.schema.json usr/share/blesend/json-events.schema.json
inst 0644 packaging/copyright "$doc/copyright"
gz packaging/changelog "$doc/changelog.gz"   # a native package's changelog (policy 12.7)

inst 0644 packaging/blerecv.service usr/lib/systemd/system/blerecv.service
inst 0644 packaging/default etc/default/blerecv
install -d -m 0755 "$root/etc/blesend/trusted"
install -D -m 0644 packaging/lintian-overrides "$root/usr/share/lintian/overrides/blesend"

# 3. Control files.
mkdir -p "$root/DEBIAN"
for script in postinst prerm postrm; do install -m 0755 "packaging/$script" "$root/DEBIAN/$script"; done
echo /etc/default/blerecv >"$root/DEBIAN/conffiles"
chmod 0644 "$root/DEBIAN/conffiles"

# Library dependencies from Debian's shlibs/symbols files: every library must belong to a Debian
# package, or dpkg-shlibdeps fails.
shlib=$stage/shlibdeps
mkdir -p "$shlib/debian"
printf 'Source: blesend\n\nPackage: blesend\nArchitecture: any\n' >"$shlib/debian/control"
libdeps=$(cd "$shlib" && dpkg-shlibdeps -O "$repo/$root/usr/bin/blesend" "$repo/$root/usr/bin/blerecv" 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
for lib in libsodium23 libdbus-1-3 libzstd1; do
  [[ ", $libdeps" == *", $lib "* || ", $libdeps," == *", $lib,"* ]] ||
    { log "error: expected $lib among the library dependencies, got: $libdeps"; exit 1; }
done
# bluez: bluetoothd and the bluetooth group; adduser: the postinst.
depends="$libdeps, adduser, bluez"
installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_SIZE@/$installed_size/" \
  -e "s/@DEPENDS@/$depends/" packaging/control.in >"$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
  xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

# 4. Build and check.
deb=$output/blesend_${version}_${arch}.deb
dpkg-deb --build --root-owner-group -Zxz "$root" "$deb" >&2
log "depends: $depends"
if [ "$lintian" = 1 ]; then
  log "lintian"
  lintian --fail-on error --info --display-level '>=warning' "$deb" >&2 ||
    { log "error: lintian reports errors"; exit 1; }
fi
log "built $deb ($(du -h "$deb" | cut -f1))"
echo "$deb"
