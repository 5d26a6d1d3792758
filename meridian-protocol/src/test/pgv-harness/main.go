// Command pgvharness writes PGV's harness cases (TestCases, from PGV's own
// tests/harness/executor/cases.go, copied beside this file by generate.sh) as
// one TSV line each, for Meridian's Java conformance test.
package main

import (
	"bufio"
	"encoding/base64"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"google.golang.org/protobuf/proto"
)

func main() {
	commit := flag.String("commit", "", "the PGV commit the cases come from")
	out := flag.String("out", "", "the TSV file to write")
	flag.Parse()
	if *commit == "" || *out == "" {
		log.Fatal("usage: pgvharness -commit SHA -out cases.tsv")
	}

	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	// The header is what the Java test's clock is fixed at: no case built
	// from time.Now() can be older than generatedAt (see a_generated_at.go).
	fmt.Fprintf(w, "#pgv-commit\t%s\tgenerated-unix-seconds\t%d\n", *commit, generatedAt.Unix())
	fmt.Fprintln(w, "#index\tname\tmessage-type\tmessage-base64\tfailures")

	// Deterministic: map entries in key order, so that a regeneration only
	// changes the lines whose content changed.
	opts := proto.MarshalOptions{Deterministic: true}
	// A few names appear twice in cases.go (for two message types): the
	// index, the case's place in TestCases, tells them apart.
	for i, tc := range TestCases {
		if strings.ContainsAny(tc.Name, "\t\n") {
			log.Fatalf("case name %q has a tab or a newline", tc.Name)
		}
		b, err := opts.Marshal(tc.Message)
		if err != nil {
			log.Fatalf("case %q: %v", tc.Name, err)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\n", i, tc.Name,
			tc.Message.ProtoReflect().Descriptor().FullName(),
			base64.StdEncoding.EncodeToString(b), tc.Failures)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d cases written to %s", len(TestCases), *out)
}
