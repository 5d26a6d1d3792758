package main

import "time"

// Package variables are initialised in the order of their files' names, and
// this file's name sorts before cases.go: every "now" the cases take is at or
// after generatedAt, and the offsets they use (30 minutes and more) dwarf the gap.
var generatedAt = time.Now()
