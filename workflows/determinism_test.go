package workflows_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"parley/platform/problem"
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
		{"transcription from URL", workflows.TranscriptionWorkflowName, workflows.TranscriptionInput{JobID: jobID, FromURL: true}, nil},
		{"transcription failing", workflows.TranscriptionWorkflowName, workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey},
			script{workflows.ActTranscribeChunk: always(errors.New("engine down"))}},
		{"subtitles with cleanup", workflows.SubtitlesWorkflowName, workflows.SubtitlesInput{JobID: jobID, VoiceCleanup: true, MediaKey: uploadKey}, nil},
		{"subtitles charge refused", workflows.SubtitlesWorkflowName, workflows.SubtitlesInput{JobID: jobID, VoiceCleanup: true, MediaKey: uploadKey},
			script{workflows.ActCharge: onAttempt(2, refused(problem.InsufficientBalance, "short"))}},
		{"reburn", workflows.ReburnWorkflowName, workflows.ReburnInput{JobID: jobID, Run: 2, SourceKey: uploadKey}, nil},
		{"reburn failing", workflows.ReburnWorkflowName, workflows.ReburnInput{JobID: jobID, Run: 2, SourceKey: uploadKey},
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
