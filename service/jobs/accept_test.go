package jobs

import (
	"errors"
	"testing"

	"parley/platform/problem"
	"parley/provider/media"
	"parley/rules/jobspec"
)

func TestAcceptRefusesMediaAJobCannotUse(t *testing.T) {
	audio := media.Info{HasAudio: true}
	video := media.Info{HasAudio: true, HasVideo: true}
	tests := []struct {
		kind     jobspec.Kind
		info     media.Info
		probeErr error
		want     string
	}{
		{jobspec.Transcription, audio, nil, ""},
		{jobspec.Subtitles, video, nil, ""},
		{jobspec.Subtitles, audio, nil, problem.MediaUnreadable},
		{jobspec.Transcription, media.Info{HasVideo: true}, nil, problem.NoAudioStream},
		{jobspec.Transcription, media.Info{}, media.ErrUnreadable, problem.MediaUnreadable},
	}
	for _, tt := range tests {
		err := Accept(tt.kind, tt.info, tt.probeErr)
		p, _ := problem.As(err)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %+v: %v", tt.kind, tt.info, err)
		case tt.want != "" && (p == nil || p.Code != tt.want):
			t.Errorf("%s %+v: %v, want %s", tt.kind, tt.info, err, tt.want)
		}
	}
	other := errors.New("store down")
	if err := Accept(jobspec.Transcription, media.Info{}, other); !errors.Is(err, other) {
		t.Errorf("an outage is passed through: %v", err)
	}
}
