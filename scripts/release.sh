#!/usr/bin/env bash
# scripts/release.sh — versioned tidemark binaries, one archive per platform.
#
#   scripts/release.sh [VERSION]      e.g. scripts/release.sh v0.4.0
#
# VERSION defaults to `git describe --tags --always --dirty`. For each
# platform it builds cmd/tidemark with -trimpath and
#   -ldflags "-X main.version=VERSION -X main.commit=$(git rev-parse HEAD)"
# into dist/tidemark_VERSION_OS_ARCH.tar.gz (the binary, README.md, docs/), then
# writes dist/SHA256SUMS. Then scripts/wheels.sh makes the Python package's
# wheels from the Linux ones (dist/tidemark-*.whl, listed in SHA256SUMS too;
# its header says what they hold). It checks each binary: the one for this machine
# runs `tidemark version` and must print VERSION, the commit and DuckDB's
# version; a cross-built one must name its GOOS/GOARCH in its build info
# (go version -m) and hold VERSION and the commit.
#
# Platforms (PLATFORMS="linux/amd64 linux/arm64" by default):
#   linux/amd64  gcc (x86_64-linux-gnu-gcc when cross-building from arm64)
#   linux/arm64  gcc-aarch64-linux-gnu and g++-aarch64-linux-gnu from Debian
#                when cross-building from amd64 (apt-get install
#                gcc-aarch64-linux-gnu g++-aarch64-linux-gnu); a native gcc
#                on an arm64 machine
# DuckDB is cgo, so every platform needs a C/C++ toolchain for it; the
# DuckDB library itself comes prebuilt with github.com/duckdb/duckdb-go-bindings,
# which ships it for linux amd64 and arm64, darwin amd64 and arm64, and
# windows amd64. Those other three build on their own machines with their
# own toolchain, e.g. on a Mac with Xcode's command-line tools:
#   PLATFORMS=darwin/arm64 scripts/release.sh v0.4.0
# and on Windows with MinGW-w64 gcc in PATH (PLATFORMS=windows/amd64). They
# are not cross-built from Linux here: that needs a macOS SDK (osxcross) or
# a MinGW toolchain matching DuckDB's library, neither of which this script
# installs. Without cgo (CGO_ENABLED=0) tidemark does not build: its default
# engine is DuckDB.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'scripts/release.sh: %b\n' "$*" >&2; exit 1; }

version="${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
case "$version" in
	*[!A-Za-z0-9._+-]*) die "version \"$version\": use letters, digits and . _ + - only" ;;
esac
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	commit="$commit-dirty"
fi
platforms="${PLATFORMS:-linux/amd64 linux/arm64}"
dist="${DIST:-dist}"
host="$(go env GOOS)/$(go env GOARCH)"

# cc_for names the C compiler for a target platform, or fails saying which
# package brings it.
cc_for() {
	local target="$1" cc
	if [ "$target" = "$host" ]; then
		cc="${CC:-gcc}"
	else
		case "$target" in
			linux/arm64) cc=aarch64-linux-gnu-gcc ;;
			linux/amd64) cc=x86_64-linux-gnu-gcc ;;
			*) die "$target: cross-building from $host is not supported; build on a $target machine (see this script's header)" ;;
		esac
	fi
	command -v "$cc" >/dev/null || die "$target: no C compiler $cc (on Debian: apt-get install gcc-${cc%-gcc} g++-${cc%-gcc})"
	echo "$cc"
}

mkdir -p "$dist"
archives=()
for p in $platforms; do
	goos="${p%/*}" goarch="${p#*/}"
	cc="$(cc_for "$p")"
	cxx="${cc%gcc}g++"
	name="tidemark_${version}_${goos}_${goarch}"
	work="$(mktemp -d)"
	exe=tidemark
	[ "$goos" = windows ] && exe=tidemark.exe
	log "building $name with $cc"
	start=$SECONDS
	CGO_ENABLED=1 GOOS="$goos" GOARCH="$goarch" CC="$cc" CXX="$cxx" \
		go build -trimpath -buildvcs=false \
		-ldflags "-s -w -X main.version=$version -X main.commit=$commit" \
		-o "$work/$name/$exe" ./cmd/tidemark
	log "built $name in $((SECONDS - start)) s"

	# The binary says what it is.
	info="$(go version -m "$work/$name/$exe")"
	grep -q "GOOS=$goos" <<<"$info" && grep -q "GOARCH=$goarch" <<<"$info" ||
		die "$name: the binary's build info names another platform:\n$info"
	# (-trimpath leaves -ldflags out of the build info: look for the string.)
	grep -qaF -- "$version" "$work/$name/$exe" || die "$name: the binary does not carry version $version"
	grep -qaF -- "$commit" "$work/$name/$exe" || die "$name: the binary does not carry commit $commit"
	if [ "$p" = "$host" ]; then
		out="$("$work/$name/$exe" version)"
		grep -qx "tidemark $version" <<<"$out" || die "$name: tidemark version printed:\n$out"
		grep -qx "commit $commit" <<<"$out" || die "$name: tidemark version does not name commit $commit:\n$out"
		grep -q '^duckdb v' <<<"$out" || die "$name: tidemark version does not name DuckDB's version:\n$out"
	fi

	# The README links into docs/: the archive carries both.
	cp README.md "$work/$name/"
	cp -R docs "$work/$name/docs"
	tar -C "$work" -czf "$dist/$name.tar.gz" "$name"
	rm -rf "$work"
	archives+=("$name.tar.gz")
done
(cd "$dist" && sha256sum "${archives[@]}" >SHA256SUMS)
log "wrote ${archives[*]} and SHA256SUMS in $dist/"

# The Python package's platform wheels, carrying these binaries.
scripts/wheels.sh "$version" "$dist"
