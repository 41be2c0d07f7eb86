package elevenlabs

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"parley/platform/multipartfile"
)

const (
	speechToTextPath = "/v1/speech-to-text"
	modelsPath       = "/v1/models"
	// speechToTextTimeout bounds one speech-to-text attempt: a long
	// recording is answered in minutes.
	speechToTextTimeout = 30 * time.Minute
	// maxTranscriptBytes bounds a speech-to-text answer: word timings of
	// several hours are a few MB of JSON.
	maxTranscriptBytes = 64 << 20
)

// SpeechToTextParams are the form fields of POST /v1/speech-to-text
// (Scribe) besides the audio file.
type SpeechToTextParams struct {
	ModelID string // e.g. scribe_v1
	// LanguageCode pins the language (ISO 639-1 or 639-3); "" lets the
	// model detect it.
	LanguageCode string
	// Diarize labels each word with its speaker.
	Diarize bool
	// TimestampsGranularity is none, word or character.
	TimestampsGranularity string
	// TagAudioEvents adds words of type audio_event, such as (laughter).
	TagAudioEvents bool
}

func (p SpeechToTextParams) fields() []multipartfile.Field {
	f := []multipartfile.Field{
		{Name: "model_id", Value: p.ModelID},
		{Name: "diarize", Value: strconv.FormatBool(p.Diarize)},
		{Name: "timestamps_granularity", Value: p.TimestampsGranularity},
		{Name: "tag_audio_events", Value: strconv.FormatBool(p.TagAudioEvents)},
	}
	if p.LanguageCode != "" {
		f = append(f, multipartfile.Field{Name: "language_code", Value: p.LanguageCode})
	}
	return f
}

// Transcription is the answer of POST /v1/speech-to-text. Fields we do not
// use are left out and ignored when decoding.
type Transcription struct {
	// LanguageCode is the detected (or pinned) language, ISO 639-3 ("eng").
	LanguageCode        string  `json:"language_code"`
	LanguageProbability float64 `json:"language_probability"`
	Text                string  `json:"text"`
	Words               []Word  `json:"words"`
}

// Word is one item of a transcription: a word, the spacing between words,
// or an audio event.
type Word struct {
	Text  string  `json:"text"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Type is word, spacing or audio_event.
	Type      string `json:"type"`
	SpeakerID string `json:"speaker_id"`
}

// SpeechToText uploads the audio file at audioPath (a WAV file) to
// POST /v1/speech-to-text and returns the transcription. It retries as
// every request of the client does, sending the file again each time.
func (c *Client) SpeechToText(ctx context.Context, audioPath string, p SpeechToTextParams) (Transcription, error) {
	body, err := multipartfile.New(audioPath, "file", "audio/wav", p.fields())
	if err != nil {
		return Transcription{}, fmt.Errorf("elevenlabs: speech-to-text: %w", err)
	}
	r := request{
		method: http.MethodPost, path: speechToTextPath, upload: body,
		timeout: speechToTextTimeout, maxBody: maxTranscriptBytes,
	}
	var t Transcription
	_, err = c.call(ctx, r, &t)
	return t, err
}

// CheckKey sends one GET /v1/models, without retries: the cheapest request
// any valid key may make (the speech-to-text engine's health check).
func (c *Client) CheckKey(ctx context.Context) error {
	_, err := c.once(ctx, request{method: http.MethodGet, path: modelsPath, timeout: c.timeout, maxBody: maxBodyBytes})
	return err
}
