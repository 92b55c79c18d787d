#!/usr/bin/env bash
# Put a local copy of MathJax 3 into docs/_static/mathjax/ so that the built
# pages render formulas without network access (conf.py uses it when present;
# otherwise the pages load MathJax from its CDN).
#
# Source: the "mathjax" package of the npm registry, via `npm pack`.
# Copies only what the pages need: es5/tex-chtml.js and its woff-v2 fonts
# (about 1.6 MB). The copy is git-ignored (docs/.gitignore).
#
# Usage: bash docs/_tools/fetch_mathjax.sh   (needs npm and tar)
set -euo pipefail

MATHJAX_VERSION="${MATHJAX_VERSION:-3.2.2}"
docs_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$docs_dir/_static/mathjax"

if [ -f "$dest/tex-chtml.js" ] && [ -f "$dest/VERSION" ] \
        && [ "$(cat "$dest/VERSION")" = "$MATHJAX_VERSION" ]; then
    echo "MathJax $MATHJAX_VERSION already in $dest"
    exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack "mathjax@$MATHJAX_VERSION" --silent >/dev/null)
tar -xzf "$tmp/mathjax-$MATHJAX_VERSION.tgz" -C "$tmp" \
    package/es5/tex-chtml.js package/es5/output/chtml/fonts/woff-v2 package/LICENSE

rm -rf "$dest"
mkdir -p "$dest/output/chtml/fonts"
cp "$tmp/package/es5/tex-chtml.js" "$dest/"
cp -r "$tmp/package/es5/output/chtml/fonts/woff-v2" "$dest/output/chtml/fonts/"
cp "$tmp/package/LICENSE" "$dest/LICENSE"
echo "$MATHJAX_VERSION" > "$dest/VERSION"
echo "MathJax $MATHJAX_VERSION copied to $dest"
