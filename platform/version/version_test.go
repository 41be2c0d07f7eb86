package version

import (
	"runtime/debug"
	"testing"
)

func TestDescribe(t *testing.T) {
	tests := []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{"no vcs information", nil, Release},
		{"a clean commit", []debug.BuildSetting{{Key: "vcs.revision", Value: "3f2a1b9c0d1e4f5a6b7c"}, {Key: "vcs.modified", Value: "false"}}, Release + "+3f2a1b9c0d1e"},
		{"uncommitted changes", []debug.BuildSetting{{Key: "vcs.revision", Value: "3f2a1b9c0d1e4f5a6b7c"}, {Key: "vcs.modified", Value: "true"}}, Release + "+3f2a1b9c0d1e.dirty"},
		{"a truncated revision", []debug.BuildSetting{{Key: "vcs.revision", Value: "3f2a"}}, Release},
	}
	for _, tt := range tests {
		if got := describe(tt.settings); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
