package workflows_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/workflows"
)

func cleanAudio() call {
	return call{workflows.ActCleanAudio, workflows.CleanAudioInput{JobID: jobID, SourceKey: uploadKey}}
}
func buildSRT() call { return call{workflows.ActBuildSRT, workflows.JobInput{JobID: jobID}} }

func setStatus(from, to string) call {
	return call{workflows.ActSetStatus, workflows.SetStatusInput{JobID: jobID, From: []string{from}, To: to}}
}

func burn(run int) call {
	return call{workflows.ActBurn, workflows.BurnInput{JobID: jobID, Run: run, SourceKey: uploadKey}}
}

// burnCleaned is a burn run that replaces the video's sound with the cleaned track.
func burnCleaned(run int) call {
	return call{workflows.ActBurn, workflows.BurnInput{JobID: jobID, Run: run, SourceKey: uploadKey,
		CleanedAudioKey: jobspec.CleanedAudioKey(jobID)}}
}

func publish(run int) call {
	return call{workflows.ActPublishBurn, workflows.PublishInput{JobID: jobID, OutputKey: jobspec.OutputKey(jobID, run)}}
}

func reburnFailed(code, message string) call {
	return call{workflows.ActReburnFailed, workflows.ReburnFailedInput{JobID: jobID, Code: code, Message: message}}
}

func TestSubtitlesWorkflow(t *testing.T) {
	tests := []struct {
		name      string
		in        workflows.SubtitlesInput
		fail      script
		wantCalls []call
		wantCode  string
	}{
		{
			name: "with voice cleanup the engine hears the cleaned audio and every stage is charged",
			in:   workflows.SubtitlesInput{JobID: jobID, VoiceCleanup: true, MediaKey: uploadKey},
			wantCalls: seq(start(), cleanAudio(), prepare(jobspec.CleanedAudioKey(jobID)), reprice(),
				setStatus("processing", "transcribing"), transcribe(), buildSRT(),
				setStatus("transcribing", "burning"), burnCleaned(1),
				charge(jobspec.StageTranscription.Name, jobspec.StageVoiceCleanup.Name, jobspec.StageBurn.Name), publish(1),
				finish("", ""), notifyCall()),
		},
		{
			name: "without voice cleanup nothing is cleaned or charged for it",
			in:   workflows.SubtitlesInput{JobID: jobID, MediaKey: uploadKey},
			wantCalls: seq(start(), prepare(uploadKey), reprice(),
				setStatus("processing", "transcribing"), transcribe(), buildSRT(),
				setStatus("transcribing", "burning"), burn(1),
				charge(jobspec.StageTranscription.Name, jobspec.StageBurn.Name), publish(1),
				finish("", ""), notifyCall()),
		},
		{
			name: "a burn that keeps failing fails the job as BURN_FAILED and charges nothing",
			in:   workflows.SubtitlesInput{JobID: jobID, VoiceCleanup: true, MediaKey: uploadKey},
			fail: script{workflows.ActBurn: always(errors.New("ffmpeg killed"))},
			wantCalls: seq(start(), cleanAudio(), prepare(jobspec.CleanedAudioKey(jobID)), reprice(),
				setStatus("processing", "transcribing"), transcribe(), buildSRT(),
				setStatus("transcribing", "burning"), repeat(burnCleaned(1), mediaAttempts),
				finish(problem.BurnFailed, ""), notifyCall()),
			wantCode: problem.BurnFailed,
		},
		{
			name: "a cleanup that keeps failing fails the job as CLEANUP_FAILED",
			in:   workflows.SubtitlesInput{JobID: jobID, VoiceCleanup: true, MediaKey: uploadKey},
			fail: script{workflows.ActCleanAudio: always(errors.New("voice api 503"))},
			wantCalls: seq(start(), repeat(cleanAudio(), mediaAttempts),
				finish(problem.CleanupFailed, ""), notifyCall()),
			wantCode: problem.CleanupFailed,
		},
		{
			name: "cleanup refused with a code keeps that code",
			in:   workflows.SubtitlesInput{JobID: jobID, VoiceCleanup: true, MediaKey: uploadKey},
			fail: script{workflows.ActCleanAudio: always(refused(problem.VoiceAPINotConfigured, "not configured"))},
			wantCalls: seq(start(), cleanAudio(),
				finish(problem.VoiceAPINotConfigured, "not configured"), notifyCall()),
			wantCode: problem.VoiceAPINotConfigured,
		},
		{
			name: "an unsupported language stops before the SRT",
			in:   workflows.SubtitlesInput{JobID: jobID, MediaKey: uploadKey},
			fail: script{workflows.ActTranscribeChunk: always(refused(problem.UnsupportedLanguage, "xx"))},
			wantCalls: seq(start(), prepare(uploadKey), reprice(), setStatus("processing", "transcribing"), split(), chunk(wholeChunk(), "en"),
				finish(problem.UnsupportedLanguage, "xx"), notifyCall()),
			wantCode: problem.UnsupportedLanguage,
		},
		{
			name: "a worker lost mid-burn is retried and every stage charged once",
			in:   workflows.SubtitlesInput{JobID: jobID, MediaKey: uploadKey},
			fail: script{workflows.ActBurn: onAttempt(1, temporal.NewHeartbeatTimeoutError())},
			wantCalls: seq(start(), prepare(uploadKey), reprice(),
				setStatus("processing", "transcribing"), transcribe(), buildSRT(),
				setStatus("transcribing", "burning"), burn(1), burn(1),
				charge(jobspec.StageTranscription.Name, jobspec.StageBurn.Name), publish(1),
				finish("", ""), notifyCall()),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.fail)
			err := h.run(t, workflows.SubtitlesWorkflowName, tt.in)
			requireFailedWith(t, err, tt.wantCode)
			require.Equal(t, tt.wantCalls, h.calls)
		})
	}
}

// Every stage is charged in one all-or-nothing activity (the ledger posts
// them in one transaction), before the video is published: a refused charge
// fails the job with nothing charged and nothing published.
func TestSubtitlesWorkflowFailedChargeLeavesNoCharges(t *testing.T) {
	short := refused(problem.InsufficientBalance, "short")
	h := newHarness(t, script{workflows.ActCharge: onAttempt(1, short)})
	err := h.run(t, workflows.SubtitlesWorkflowName, workflows.SubtitlesInput{JobID: jobID, VoiceCleanup: true, MediaKey: uploadKey})
	requireFailedWith(t, err, problem.InsufficientBalance)
	require.Len(t, h.named(workflows.ActCharge), 1)
	require.Len(t, h.named(workflows.ActPublishBurn), 0)
}

// reburnedEvent is the subtitles.reburned event of run, emitted however the
// re-burn ended.
func reburnedEvent(run int) call {
	return call{workflows.ActEmitJobEvent, workflows.EmitJobInput{JobID: jobID, Type: "subtitles.reburned", Subject: fmt.Sprintf("%d/reburn/%d", jobID, run)}}
}

func TestReburnWorkflow(t *testing.T) {
	const run = 3
	tests := []struct {
		name      string
		fail      script
		wantCalls []call
		wantErr   bool
	}{
		{
			name:      "success publishes run N and returns the job to done, free",
			wantCalls: seq(burn(run), publish(run), setStatus("burning", "done"), reburnedEvent(run)),
		},
		{
			name:      "a burn that keeps failing is recorded as BURN_FAILED",
			fail:      script{workflows.ActBurn: always(errors.New("ffmpeg killed"))},
			wantCalls: seq(repeat(burn(run), mediaAttempts), reburnFailed(problem.BurnFailed, ""), reburnedEvent(run)),
			wantErr:   true,
		},
		{
			name:      "a refused burn is recorded with its own code and message",
			fail:      script{workflows.ActBurn: always(refused(problem.MediaUnreadable, "unreadable"))},
			wantCalls: seq(burn(run), reburnFailed(problem.MediaUnreadable, "unreadable"), reburnedEvent(run)),
			wantErr:   true,
		},
		{
			name:      "a publish that fails after the burn is recorded as BURN_FAILED",
			fail:      script{workflows.ActPublishBurn: always(refused("SomethingElse", "db gone"))},
			wantCalls: seq(burn(run), publish(run), reburnFailed(problem.BurnFailed, ""), reburnedEvent(run)),
			wantErr:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.fail)
			err := h.run(t, workflows.ReburnWorkflowName, workflows.ReburnInput{JobID: jobID, Run: run, SourceKey: uploadKey})
			if tt.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tt.wantCalls, h.calls)
			require.Empty(t, h.named(workflows.ActCharge))
			require.Empty(t, h.named(workflows.ActFinish))
		})
	}
}
