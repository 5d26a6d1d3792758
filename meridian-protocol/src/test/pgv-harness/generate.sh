#!/usr/bin/env bash
# Regenerates ../resources/pgv-harness/cases.desc and cases.tsv from a PGV checkout
# (a work tree, or a bare git directory whose HEAD is used). A dev-time tool: CI never runs it.
#
#   generate.sh PATH_TO_PGV
#
# Needs protoc (Debian: apt-get install protobuf-compiler), protoc-gen-go at the version below on
# PATH (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11) and Go.
set -euo pipefail

# The same version as google.golang.org/protobuf in go.mod: generated code and runtime must agree.
protoc_gen_go_version=v1.36.11

if [ $# -ne 1 ]; then
  echo "usage: $0 PATH_TO_PGV" >&2
  exit 2
fi
pgv=$1
here=$(cd "$(dirname "$0")" && pwd)
out=$(cd "$here/../resources/pgv-harness" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

export PATH="$PATH:$(go env GOPATH)/bin"
command -v protoc >/dev/null || { echo "protoc not found" >&2; exit 1; }
have=$(protoc-gen-go --version 2>/dev/null | awk '{print $2}') || true
if [ "$have" != "$protoc_gen_go_version" ]; then
  echo "protoc-gen-go $protoc_gen_go_version needed, found '${have:-none}'" >&2
  exit 1
fi

# The tree to read and the commit it is.
if [ "$(git -C "$pgv" rev-parse --is-bare-repository 2>/dev/null || echo no)" = true ]; then
  tree=$tmp/pgv
  mkdir -p "$tree"
  git -C "$pgv" archive HEAD | tar -x -C "$tree"
  commit=$(git -C "$pgv" rev-parse HEAD)
else
  tree=$(cd "$pgv" && pwd)
  commit=$(git -C "$tree" rev-parse HEAD 2>/dev/null || echo "${PGV_COMMIT:-}")
  if [ -z "$commit" ]; then
    echo "not a git checkout: set PGV_COMMIT to the commit it is" >&2
    exit 1
  fi
  if [ -n "$(git -C "$tree" status --porcelain 2>/dev/null)" ]; then
    echo "warning: $tree has local changes; the data will not be exactly $commit" >&2
  fi
fi

# The well-known types: protoc's own include directory, where Debian puts it unless told.
wkt=${PROTOC_INCLUDE:-/usr/include}
[ -f "$wkt/google/protobuf/any.proto" ] || { echo "no google/protobuf/any.proto under $wkt: set PROTOC_INCLUDE" >&2; exit 1; }

cd "$tree"
mapfile -t cases < <(find tests/harness/cases -name '*.proto' | LC_ALL=C sort)
echo "${#cases[@]} case protos at $commit"

# 1. Every case proto with all it imports, for the Java test to build descriptors from.
protoc -I . -I "$wkt" --include_imports --descriptor_set_out="$tmp/cases.desc" "${cases[@]}"

# 2. A module where PGV's cases.go compiles unchanged: this folder's Go files, cases.go, and the
#    protos' Go code in ./gen under the import paths their go_package options name.
mod=$tmp/mod
mkdir -p "$mod/gen"
cp "$here"/*.go "$here/go.mod" "$here/go.sum" "$mod/"
cp tests/harness/executor/cases.go "$mod/"
protoc -I . -I "$wkt" --go_out="$mod/gen" \
  --go_opt=module=github.com/envoyproxy/protoc-gen-validate \
  validate/validate.proto "${cases[@]}"
cat > "$mod/gen/go.mod" <<MOD
module github.com/envoyproxy/protoc-gen-validate

go 1.24

require google.golang.org/protobuf $protoc_gen_go_version
MOD

# 3. One line per case: name, type, the message's bytes, expected failures.
(cd "$mod" && go run . -commit "$commit" -out "$tmp/cases.tsv")

mv "$tmp/cases.desc" "$out/cases.desc"
mv "$tmp/cases.tsv" "$out/cases.tsv"
echo "wrote $out/cases.desc and $out/cases.tsv"
