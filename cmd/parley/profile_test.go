package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// PARLEY_CPU_PROFILE: the profile is written, gzipped as pprof writes it,
// when the process stops; a file that cannot be created is an error at start.
func TestCPUProfileIsWrittenOnStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := startCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Fatalf("the profile is not gzipped pprof data: % x", data[:min(len(data), 8)])
	}
	if _, err := startCPUProfile(filepath.Join(t.TempDir(), "missing", "cpu.pprof")); err == nil {
		t.Fatal("a profile in a missing folder was accepted")
	}
}
