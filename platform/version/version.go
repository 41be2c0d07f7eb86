// Package version says which release a binary was built from: `parley
// version` prints it, GET /health reports it, and CHANGELOG.md's newest
// release must name it (docs/readme_test.go checks).
package version

import (
	"runtime/debug"
	"strings"
)

// Release is the last release cut from this tree. Cutting one is a commit
// that raises it beside CHANGELOG.md's new section, tagged v<Release>
// (README, "Releasing").
const Release = "0.1.0"

// String is Release, followed, when the build knows its commit, by that
// commit as semver build metadata: "0.1.0+3f2a1b9c0d1e" (".dirty" when the
// tree had uncommitted changes). A binary built from the tag's commit says
// which commit that was, so two builds can always be told apart.
func String() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Release
	}
	return describe(info.Settings)
}

func describe(settings []debug.BuildSetting) string {
	var rev string
	var dirty bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) < 12 {
		return Release
	}
	meta := []string{rev[:12]}
	if dirty {
		meta = append(meta, "dirty")
	}
	return Release + "+" + strings.Join(meta, ".")
}
