module dev.meridian/pgvharness

go 1.24

require (
	github.com/envoyproxy/protoc-gen-validate v0.0.0-00010101000000-000000000000
	google.golang.org/protobuf v1.36.11
)

// generate.sh writes the Go code protoc-gen-go makes of PGV's protos into ./gen,
// under the import paths their go_package options name: PGV's cases.go then
// compiles against it unchanged.
replace github.com/envoyproxy/protoc-gen-validate => ./gen
