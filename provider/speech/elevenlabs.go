package speech

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"parley/provider/elevenlabs"
	"parley/rules/transcript"
)

const defaultElevenLabsModel = "scribe_v1"

// ElevenLabs transcribes with Scribe through the ElevenLabs client
// (provider/elevenlabs, POST /v1/speech-to-text). It diarizes: words carry
// the speaker_id the API returns.
type ElevenLabs struct {
	Client *elevenlabs.Client
	Model  string // defaults to scribe_v1
}

func (e *ElevenLabs) Name() string { return EngineElevenLabs }

func (e *ElevenLabs) Transcribe(ctx context.Context, audioPath string, opts Options) (transcript.Transcript, error) {
	lang, err := pinnedLanguage(opts)
	if err != nil {
		return transcript.Transcript{}, err
	}
	model := e.Model
	if model == "" {
		model = defaultElevenLabsModel
	}
	r, err := e.Client.SpeechToText(ctx, audioPath, elevenlabs.SpeechToTextParams{
		ModelID: model, LanguageCode: lang, Diarize: true, TimestampsGranularity: "word",
	})
	if err != nil {
		return transcript.Transcript{}, elevenLabsError(err)
	}

	t := transcript.Transcript{
		Text:     strings.TrimSpace(r.Text),
		Language: NormalizeLanguage(r.LanguageCode),
	}
	if t.Language == "" {
		t.Language = lang
	}
	for _, w := range r.Words {
		word := strings.TrimSpace(w.Text)
		if w.Type != "" && w.Type != "word" || word == "" {
			continue
		}
		t.Words = append(t.Words, transcript.Word{Word: word, Start: w.Start, End: w.End, Speaker: w.SpeakerID})
	}
	if t.Text == "" && len(t.Words) > 0 {
		t.Text = joinWords(t.Words)
	}
	t.Duration = fallbackDuration(audioPath, t.Words)
	return t, nil
}

// Health checks the key against GET /v1/models.
func (e *ElevenLabs) Health(ctx context.Context) error {
	return elevenLabsError(e.Client.CheckKey(ctx))
}

// elevenLabsError puts the client's errors in this package's terms: an
// HTTP answer is an *APIError (permanent for a 4xx other than 408 and
// 429), an answer the client could not use is permanent, and the rest
// (transport errors, timeouts) stays worth retrying.
func elevenLabsError(err error) error {
	var apiErr *elevenlabs.APIError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &apiErr):
		return &APIError{Engine: EngineElevenLabs, StatusCode: apiErr.Status, Body: apiErr.Body}
	case errors.Is(err, elevenlabs.ErrBadResponse):
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	return err
}
