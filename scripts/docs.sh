#!/usr/bin/env bash
# scripts/docs.sh — builds the docs site (mkdocs.yml, pages under docs/) with
# mkdocs-material, strictly: a link to a page that does not exist, an anchor
# that no heading makes, a page left out of the nav or a link that leaves
# docs/ by a relative path fails the build, naming the page and the link.
#
#   scripts/docs.sh              build the repository's site into a scratch folder
#   scripts/docs.sh DIR          build the site whose mkdocs.yml is in DIR
#   SITE_DIR=out scripts/docs.sh write the site to out/ (kept)
#   scripts/docs.sh --mkdocs     print the path of the pinned mkdocs (made if missing)
#
# mkdocs and its plugins come from PyPI at the versions of
# scripts/docs-requirements.txt, into a virtual environment cached outside
# the repository (as scripts/test.sh caches its venvs), made once per
# version of that file; with it cached a build takes a few seconds.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export NO_MKDOCS_2_WARNING=1 # mkdocs-material's banner about its successor, on every build
log() { printf '==> %s\n' "$*" >&2; }

reqs="$here/docs-requirements.txt"
MKDOCS_MATERIAL_VERSION="$(sed -n 's/^mkdocs-material==//p' "$reqs")"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/tidemark-test/venv-mkdocs-material-$MKDOCS_MATERIAL_VERSION-$(sha256sum "$reqs" | cut -c1-12)"
py="$venv/bin/python"

if ! "$py" -c 'import mkdocs, material' 2>/dev/null; then
	base=python3
	if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
		log "installing python3-venv (Debian package)"
		if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq; fi
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
		base=/usr/bin/python3
	fi
	log "making a mkdocs-material $MKDOCS_MATERIAL_VERSION venv in $venv"
	rm -rf "$venv"
	mkdir -p "$(dirname "$venv")"
	"$base" -m venv "$venv"
	"$py" -m pip install -q --disable-pip-version-check -r "$reqs"
fi

if [ "${1:-}" = --mkdocs ]; then
	echo "$venv/bin/mkdocs"
	exit 0
fi

root="${1:-$here/..}"
site="${SITE_DIR:-}"
if [ -z "$site" ]; then
	site="$(mktemp -d /tmp/tidemark-site.XXXXXX)"
	trap 'rm -rf "$site"' EXIT
fi
cd "$root"
log "mkdocs build --strict ($(pwd)/mkdocs.yml) into $site"
"$venv/bin/mkdocs" build --strict --clean --site-dir "$site"
