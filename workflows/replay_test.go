package workflows_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"parley/problem"
	"parley/workflows"
)

// Running a workflow twice on the same inputs and outcomes must schedule the
// same activities with the same inputs in the same order: nothing in it may
// depend on map order, the clock or randomness.
func TestWorkflowsAreDeterministic(t *testing.T) {
	tests := []struct {
		name     string
		workflow string
		in       any
		fail     script
	}{
		{"transcription from URL", "TranscriptionWorkflow", workflows.TranscriptionInput{JobID: jobID, FromURL: true}, nil},
		{"transcription failing", "TranscriptionWorkflow", workflows.TranscriptionInput{JobID: jobID},
			script{workflows.ActTranscribe: always(errors.New("engine down"))}},
		{"subtitles with cleanup", "SubtitlesWorkflow", workflows.SubtitlesInput{JobID: jobID, VoiceCleanup: true}, nil},
		{"subtitles charge refused", "SubtitlesWorkflow", workflows.SubtitlesInput{JobID: jobID, VoiceCleanup: true},
			script{workflows.ActCharge: onAttempt(2, refused(problem.InsufficientBalance, "short"))}},
		{"reburn", "ReburnWorkflow", workflows.ReburnInput{JobID: jobID, Run: 2}, nil},
		{"reburn failing", "ReburnWorkflow", workflows.ReburnInput{JobID: jobID, Run: 2},
			script{workflows.ActBurn: always(errors.New("ffmpeg killed"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs [2][]call
			var errs [2]string
			for i := range runs {
				h := newHarness(t, tt.fail)
				if err := h.run(t, tt.workflow, tt.in); err != nil {
					errs[i] = err.Error()
				}
				runs[i] = h.calls
			}
			require.NotEmpty(t, runs[0])
			require.Equal(t, runs[0], runs[1])
			require.Equal(t, errs[0], errs[1])
		})
	}
}
