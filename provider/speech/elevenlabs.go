package speech

import (
	"context"
	"net/http"
	"strings"

	"parley/rules/transcript"
)

const (
	defaultElevenLabsBaseURL = "https://api.elevenlabs.io"
	defaultElevenLabsModel   = "scribe_v1"
)

// ElevenLabs talks to Scribe at POST {BaseURL}/v1/speech-to-text. It
// diarizes: words carry the speaker_id the API returns.
type ElevenLabs struct {
	BaseURL string // defaults to https://api.elevenlabs.io
	APIKey  string // sent as xi-api-key
	Model   string // defaults to scribe_v1
	HTTP    *http.Client
}

func (e *ElevenLabs) Name() string { return EngineElevenLabs }

func (e *ElevenLabs) base() string { return trimBase(e.BaseURL, defaultElevenLabsBaseURL) }

type elevenLabsResponse struct {
	LanguageCode        string  `json:"language_code"`
	LanguageProbability float64 `json:"language_probability"`
	Text                string  `json:"text"`
	Words               []struct {
		Text      string    `json:"text"`
		Start     flexFloat `json:"start"`
		End       flexFloat `json:"end"`
		Type      string    `json:"type"`
		SpeakerID string    `json:"speaker_id"`
	} `json:"words"`
}

func (e *ElevenLabs) Transcribe(ctx context.Context, audioPath string, opts Options) (transcript.Transcript, error) {
	lang, err := pinnedLanguage(opts)
	if err != nil {
		return transcript.Transcript{}, err
	}
	if e.APIKey == "" {
		return transcript.Transcript{}, permanentf("elevenlabs: no API key configured")
	}
	model := e.Model
	if model == "" {
		model = defaultElevenLabsModel
	}
	fields := []formField{
		{"model_id", model},
		{"diarize", "true"},
		{"timestamps_granularity", "word"},
		{"tag_audio_events", "false"},
	}
	if lang != "" {
		fields = append(fields, formField{"language_code", lang})
	}
	ctx, cancel := withDefaultTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := newMultipartRequest(ctx, e.base()+"/v1/speech-to-text", audioPath, fields)
	if err != nil {
		return transcript.Transcript{}, err
	}
	req.Header.Set("xi-api-key", e.APIKey)
	var r elevenLabsResponse
	if err := doJSON(clientOrDefault(e.HTTP), EngineElevenLabs, e.APIKey, req, &r); err != nil {
		return transcript.Transcript{}, err
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
		t.Words = append(t.Words, transcript.Word{
			Word: word, Start: float64(w.Start), End: float64(w.End), Speaker: w.SpeakerID,
		})
	}
	if t.Text == "" && len(t.Words) > 0 {
		t.Text = joinWords(t.Words)
	}
	t.Duration = fallbackDuration(audioPath, t.Words)
	return t, nil
}

// Health checks the key against GET /v1/models.
func (e *ElevenLabs) Health(ctx context.Context) error {
	if e.APIKey == "" {
		return permanentf("elevenlabs: no API key configured")
	}
	ctx, cancel := withDefaultTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base()+"/v1/models", nil)
	if err != nil {
		return permanentf("elevenlabs: bad base URL: %v", err)
	}
	req.Header.Set("xi-api-key", e.APIKey)
	return doJSON(clientOrDefault(e.HTTP), EngineElevenLabs, e.APIKey, req, nil)
}
