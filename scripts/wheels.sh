#!/usr/bin/env bash
# scripts/wheels.sh — the tidemark Python package (python/) as platform wheels.
#
#   scripts/wheels.sh VERSION [DIST]      e.g. scripts/wheels.sh v0.4.0 dist
#
# scripts/release.sh calls it once its archives are built (DIST defaults to
# $DIST, else dist). For each DIST/tidemark_VERSION_linux_ARCH.tar.gz it
# writes
#   DIST/tidemark-PYVERSION-py3-none-manylinux_X_Y_{x86_64,aarch64}.whl
# and adds it to DIST/SHA256SUMS. A wheel holds the archive's binary
# (tidemark/bin/tidemark), the `tidemark` command that runs it
# (python/tidemark/__main__.py) and the awsglue package (glue/python/awsglue,
# the files `tidemark glue run` embeds); the extra [glue] adds pyspark.
# The binaries are release.sh's: nothing is compiled here.
#
# PYVERSION is VERSION as PEP 440 spells it: v0.4.0 -> 0.4.0, v0.4.0-rc1 ->
# 0.4.0rc1, git describe's v0.4.0-3-gabc1234(-dirty) -> 0.4.0.post3+gabc1234
# (.dirty), a release with a suffix a local version of it: v0.4.0-test ->
# 0.4.0+test; anything else a local version of 0: ci-abc1234 -> 0+ci.abc1234.
# tidemark.VERSION holds VERSION as `tidemark version` prints it.
#
# The platform tag is the one auditwheel (from PyPI) finds the binary
# consistent with: the oldest manylinux whose glibc and libstdc++ have every
# symbol version it needs. A binary built on Debian 12 (glibc 2.36, GCC 12's
# libstdc++) needs glibc 2.34 and GLIBCXX_3.4.30, which makes it
# manylinux_2_35 (Ubuntu 22.04, Debian 12, and newer); pip then refuses it
# on an older system rather than install a binary that cannot start there.
# An older tag needs release.sh to build on an older glibc.
#
# Only Linux wheels are built; a darwin or windows archive in DIST is left
# alone (those platforms install with go install).
#
# Every wheel is checked before it is kept: its tags, the ELF machine of its
# binary, that it holds awsglue and no path of this machine (the checkout,
# the build folder, $HOME, GOROOT, the module cache), and the amd64 one, on
# an amd64 machine, runs `tidemark version` and must print VERSION.
#
# Tools: setuptools and auditwheel, pinned below, in a venv made once
# under ${XDG_CACHE_HOME:-~/.cache}/tidemark-build/ with python3 (3.9 or
# newer, with its venv module; on Debian: apt-get install python3-venv).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'scripts/wheels.sh: %b\n' "$*" >&2; exit 1; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/wheels.sh VERSION [DIST]"
version="$1"
dist="${2:-${DIST:-dist}}"
case "$version" in
	*[!A-Za-z0-9._+-]*) die "version \"$version\": use letters, digits and . _ + - only" ;;
esac
[ -d "$dist" ] || die "no folder $dist: run scripts/release.sh $version first"
dist="$(cd "$dist" && pwd)"
linux=()
for archive in "$dist"/tidemark_"$version"_*.tar.gz; do
	[ -e "$archive" ] || die "no archives tidemark_${version}_*.tar.gz in $dist: run scripts/release.sh $version first"
	case "$archive" in
		*_linux_amd64.tar.gz | *_linux_arm64.tar.gz) linux+=("$archive") ;;
		*) log "no wheel for ${archive##*/} (Linux only; other platforms install with go install)" ;;
	esac
done
[ ${#linux[@]} -gt 0 ] || { log "no Linux archives of $version in $dist: no wheels"; exit 0; }

SETUPTOOLS_VERSION=84.2.1
AUDITWHEEL_VERSION=6.8.2

# --- the build venv ------------------------------------------------------------
venv="${XDG_CACHE_HOME:-$HOME/.cache}/tidemark-build/venv-wheels-$SETUPTOOLS_VERSION-$AUDITWHEEL_VERSION"
py="$venv/bin/python"
if ! "$py" -c 'import setuptools, auditwheel' 2>/dev/null; then
	command -v python3 >/dev/null || die "no python3 to build the wheels with: install Python 3.9 or newer (apt-get install python3-venv)"
	log "making the wheel-building venv $venv"
	rm -rf "$venv"
	mkdir -p "$(dirname "$venv")"
	python3 -m venv "$venv" || die "python3 -m venv failed: install the venv module (apt-get install python3-venv)"
	"$py" -m pip install -q --disable-pip-version-check "setuptools==$SETUPTOOLS_VERSION" \
		"auditwheel==$AUDITWHEEL_VERSION"
fi

# --- the version ------------------------------------------------------------------
pyversion="$("$py" - "$version" <<'EOF'
import re, sys
from packaging.version import InvalidVersion, Version

v = sys.argv[1]
bare = v[1:] if re.match(r"v\d", v) else v
m = re.fullmatch(r"(\d+(?:\.\d+)*)-(\d+)-g([0-9a-f]+)(-dirty)?", bare)
if m:
    print(str(Version("%s.post%s+g%s%s" % (m[1], m[2], m[3], ".dirty" if m[4] else ""))))
    sys.exit()
try:
    print(str(Version(bare)))
    sys.exit()
except InvalidVersion:
    pass
m = re.fullmatch(r"(\d+(?:\.\d+)+)[-+._]?(.*)", bare) or re.fullmatch(r"()(.*)", v)
local = re.sub(r"[^A-Za-z0-9]+", ".", m[2]).strip(".").lower() or "unknown"
print(str(Version("%s+%s" % (m[1] or "0", local))))
EOF
)"

# --- the wheels -------------------------------------------------------------------
# A path of this machine that a wheel must not hold (each with its trailing
# slash: "/root" alone is in "catalog/root.json").
leaks=("$root" "$HOME" "$(go env GOROOT 2>/dev/null || true)" "$(go env GOMODCACHE 2>/dev/null || true)")
# SOURCE_DATE_EPOCH: the zip's timestamps are the commit's, so a rebuild of
# one commit gives the same wheel.
SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null || echo 315532800)"
export SOURCE_DATE_EPOCH

wheels=()
for archive in "${linux[@]}"; do
	platform="${archive##*/tidemark_"$version"_}"
	platform="${platform%.tar.gz}"
	case "$platform" in
		linux_amd64) arch=x86_64 machine=EM_X86_64 ;;
		linux_arm64) arch=aarch64 machine=EM_AARCH64 ;;
	esac
	work="$(mktemp -d)"
	leaks+=("$work")
	tree="$work/tidemark-$pyversion"
	mkdir -p "$tree/awsglue" "$work/out"
	tar -C "$work" -xzf "$archive" "tidemark_${version}_$platform/tidemark" ||
		die "$archive: no tidemark binary in it"
	cp python/pyproject.toml python/README.md "$tree/"
	cp -R python/tidemark "$tree/tidemark"
	rm -rf "$tree/tidemark/__pycache__" "$tree/tidemark/bin"
	cp glue/python/awsglue/*.py "$tree/awsglue/"
	mkdir -p "$tree/tidemark/bin"
	install -m 0755 "$work/tidemark_${version}_$platform/tidemark" "$tree/tidemark/bin/tidemark"
	printf '%s\n' '"""The release this package is: written by scripts/wheels.sh."""' "" \
		"__version__ = \"$pyversion\"  # the package's version (PEP 440)" \
		"VERSION = \"$version\"  # what \`tidemark version\` prints" >"$tree/tidemark/_version.py"
	# auditwheel names the manylinux tag. It reads wheels: a stored
	# (uncompressed) one holding just the binary is enough, so the real
	# wheel is compressed once, tagged as it is built.
	probe="$work/probe/probe-0-py3-none-linux_$arch.whl"
	"$py" - "$tree/tidemark/bin/tidemark" "$arch" "$probe" <<'EOF' || die "$platform: writing the wheel auditwheel reads failed"
import os, sys, zipfile
binary, arch, out = sys.argv[1:4]
os.makedirs(os.path.dirname(out))
d = "probe-0.dist-info/"
with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
    info = zipfile.ZipInfo("tidemark/bin/tidemark", (1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o100755 << 16
    with open(binary, "rb") as f:
        z.writestr(info, f.read())
    z.writestr(d + "WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-linux_%s\n" % arch)
    z.writestr(d + "METADATA", "Metadata-Version: 2.1\nName: probe\nVersion: 0\n")
    z.writestr(d + "RECORD", "".join(n + ",,\n" for n in ("tidemark/bin/tidemark", d + "WHEEL", d + "METADATA", d + "RECORD")))
EOF
	tag="$("$py" -m auditwheel show --json "$probe" 2>/dev/null | "$py" -c '
import json, sys
d = json.load(sys.stdin)
print(d.get("overall_tag") or "none (%s)" % d.get("error"))')" || die "$platform: auditwheel show failed"
	case "$tag" in
		manylinux_*_"$arch") ;;
		*) die "$platform: auditwheel finds the binary consistent with $tag, no manylinux tag for $arch" ;;
	esac
	rm -rf "$work/probe"
	printf '[bdist_wheel]\npython_tag = py3\nplat_name = %s\n' "$tag" >"$tree/setup.cfg"

	log "building the $arch wheel of tidemark $pyversion ($tag)"
	(cd "$work" && "$py" -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
		-w "$work/out" "./tidemark-$pyversion") || die "pip wheel of $tree failed"
	whl="tidemark-$pyversion-py3-none-$tag.whl"
	[ -e "$work/out/$whl" ] || die "pip wheel made no $whl: $(ls "$work/out")"

	# The checks, on the wheel as it will be shipped.
	"$py" - "$work/out/$whl" "$tag" "$machine" "${leaks[@]}" <<'EOF' || die "$whl: the checks above failed"
import sys, zipfile
from elftools.elf.elffile import ELFFile

path, tag, machine, leaks = sys.argv[1], sys.argv[2], sys.argv[3], [l.rstrip("/") + "/" for l in sys.argv[4:] if l.strip("/")]
bad = []
with zipfile.ZipFile(path) as z:
    names = z.namelist()
    info = z.getinfo("tidemark/bin/tidemark")
    if not (info.external_attr >> 16) & 0o111:
        bad.append("tidemark/bin/tidemark is not executable")
    with z.open(info) as f:
        import io
        elf = ELFFile(io.BytesIO(f.read()))
        if elf["e_machine"] != machine:
            bad.append("tidemark/bin/tidemark is an %s ELF, want %s" % (elf["e_machine"], machine))
    for want in ("awsglue/__init__.py", "awsglue/context.py", "tidemark/__main__.py"):
        if want not in names:
            bad.append("no " + want)
    meta = [n for n in names if n.endswith(".dist-info/WHEEL")]
    wheel = z.read(meta[0]).decode() if meta else ""
    if "Tag: py3-none-%s\n" % tag not in wheel:
        bad.append("its WHEEL file says\n%s\nwant the tag py3-none-%s" % (wheel, tag))
    for n in names:
        b = n.encode() + b"\0" + z.read(n)
        for leak in leaks:
            if leak.encode() in b:
                bad.append("%s holds the path %s of the build machine" % (n, leak))
for b in bad:
    print("scripts/wheels.sh: %s: %s" % (path.rsplit("/", 1)[-1], b), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
	if [ "$platform" = "linux_$(go env GOARCH 2>/dev/null)" ]; then
		rm -rf "$work/try"
		"$py" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("tidemark/bin/tidemark", sys.argv[2])' \
			"$work/out/$whl" "$work/try"
		chmod +x "$work/try/tidemark/bin/tidemark"
		out="$("$work/try/tidemark/bin/tidemark" version)"
		grep -qx "tidemark $version" <<<"$out" || die "$whl: its tidemark version printed:\n$out"
	fi
	mv "$work/out/$whl" "$dist/$whl"
	rm -rf "$work"
	wheels+=("$whl")
	log "wrote $whl"
done

# SHA256SUMS lists the wheels too (a rerun replaces their lines).
sums="$dist/SHA256SUMS"
touch "$sums"
grep -v ' tidemark-.*\.whl$' "$sums" >"$sums.tmp" || true
(cd "$dist" && sha256sum "${wheels[@]}") >>"$sums.tmp"
mv "$sums.tmp" "$sums"
