// Package docs holds the project's prose; its test keeps the README's map of
// the tree true to the folders.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"parley/platform/version"
)

// treeMarker opens the README's map of the tree; the fenced block after it
// has one line per folder, two spaces of indent per level.
const treeMarker = "<!-- tree:"

// mapped reads the folders the README's map names, as slash paths.
func mapped(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), treeMarker)
	if !ok {
		t.Fatalf("README.md has no %q marker", treeMarker)
	}
	_, block, _ := strings.Cut(after, "```\n")
	block, _, _ = strings.Cut(block, "```")
	var out, parents []string
	for line := range strings.Lines(block) {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if !strings.HasSuffix(name, "/") {
			t.Errorf("map line %q does not start with a folder", line)
			continue
		}
		depth := (len(line) - len(strings.TrimLeft(line, " "))) / 2
		if depth > len(parents) {
			t.Fatalf("map line %q is indented past its parent", line)
		}
		parents = append(parents[:depth], strings.TrimSuffix(name, "/"))
		out = append(out, strings.Join(parents, "/"))
	}
	return out
}

// folders lists the tree's folders as the map shows them: every top-level
// folder, and the folders inside those that group packages.
func folders(t *testing.T) []string {
	t.Helper()
	var out []string
	top, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range top {
		// Hidden folders and build outputs are not part of the tree.
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "bin" || e.Name() == "tmp" {
			continue
		}
		out = append(out, e.Name())
		if !slices.Contains(groups, e.Name()) {
			continue
		}
		inner, err := os.ReadDir(filepath.Join("..", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range inner {
			if f.IsDir() {
				out = append(out, e.Name()+"/"+f.Name())
			}
		}
	}
	return out
}

// groups are the top-level folders whose folders the map lists one by one.
var groups = []string{"cmd", "service", "rules", "platform", "provider", "devstack"}

func TestREADMEMapMatchesTheTree(t *testing.T) {
	want, got := folders(t), mapped(t)
	for _, f := range want {
		if !slices.Contains(got, f) {
			t.Errorf("README.md's map of the tree lacks %s/", f)
		}
	}
	for _, f := range got {
		if !slices.Contains(want, f) {
			t.Errorf("README.md's map of the tree names %s/, which does not exist", f)
		}
	}
}

// CHANGELOG.md's newest release is the one the binary says it is.
func TestChangelogNamesTheRelease(t *testing.T) {
	log, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(log)) {
		if heading, ok := strings.CutPrefix(line, "## v"); ok {
			got, _, _ := strings.Cut(strings.TrimSpace(heading), " ")
			if got != version.Release {
				t.Errorf("CHANGELOG.md's newest release is v%s, platform/version.Release is %s", got, version.Release)
			}
			return
		}
	}
	t.Error("CHANGELOG.md has no release section (## vX.Y.Z)")
}

// releaseHeading is a CHANGELOG.md release heading; the commit is named once
// the release is tagged (the README's "Releasing").
var releaseHeading = regexp.MustCompile(`^## v[0-9]+\.[0-9]+\.[0-9]+ — [0-9]{4}-[0-9]{2}-[0-9]{2}( — commit [0-9a-f]{40})?$`)

// Every release but the newest names its commit in full, in the form
// scripts/bench-compare.sh reads for its default REF.
func TestChangelogNamesReleaseCommits(t *testing.T) {
	log, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	newest := true
	for line := range strings.Lines(string(log)) {
		line = strings.TrimSuffix(line, "\n")
		if !strings.HasPrefix(line, "## v") {
			continue
		}
		m := releaseHeading.FindStringSubmatch(line)
		switch {
		case m == nil:
			t.Errorf("CHANGELOG.md heading %q is not \"## vX.Y.Z — YYYY-MM-DD\" with \" — commit <40 hex digits>\" after it", line)
		case m[1] == "" && !newest:
			t.Errorf("CHANGELOG.md heading %q names no commit; only the newest release may lack one, until it is tagged", line)
		}
		newest = false
	}
}
