package speech

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"parley/platform/multipartfile"
	"parley/rules/transcript"
)

const (
	defaultOpenAIBaseURL = "https://api.openai.com"
	defaultOpenAIModel   = "whisper-1"
)

// OpenAI talks to POST {BaseURL}/v1/audio/transcriptions: api.openai.com or
// any compatible server (faster-whisper-server, LocalAI, vLLM, ...).
type OpenAI struct {
	// BaseURL defaults to https://api.openai.com. A trailing "/v1" is
	// accepted and ignored, since many clients configure it that way.
	BaseURL string
	// APIKey is sent as a Bearer token; it may be empty for self-hosted
	// servers without auth.
	APIKey string
	// Model defaults to whisper-1.
	Model string
	// HTTP defaults to a client with connection and header timeouts.
	HTTP *http.Client
}

func (o *OpenAI) Name() string { return EngineOpenAI }

func (o *OpenAI) base() string {
	return strings.TrimSuffix(trimBase(o.BaseURL, defaultOpenAIBaseURL), "/v1")
}

func sameBase(a, b string) bool {
	return strings.TrimSuffix(strings.TrimRight(a, "/"), "/v1") == strings.TrimRight(b, "/")
}

func (o *OpenAI) authorize(req *http.Request) {
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
}

type openAIVerbose struct {
	Text     string    `json:"text"`
	Language string    `json:"language"`
	Duration flexFloat `json:"duration"`
	Words    []struct {
		Word  string    `json:"word"`
		Start flexFloat `json:"start"`
		End   flexFloat `json:"end"`
	} `json:"words"`
	Segments []struct {
		Start flexFloat `json:"start"`
		End   flexFloat `json:"end"`
		Text  string    `json:"text"`
	} `json:"segments"`
}

func (o *OpenAI) Transcribe(ctx context.Context, audioPath string, opts Options) (transcript.Transcript, error) {
	lang, err := pinnedLanguage(opts)
	if err != nil {
		return transcript.Transcript{}, err
	}
	model := o.Model
	if model == "" {
		model = defaultOpenAIModel
	}
	fields := []multipartfile.Field{
		{Name: "model", Value: model},
		{Name: "response_format", Value: "verbose_json"},
		{Name: "timestamp_granularities[]", Value: "word"},
		{Name: "timestamp_granularities[]", Value: "segment"},
	}
	if lang != "" {
		fields = append(fields, multipartfile.Field{Name: "language", Value: lang})
	}
	ctx, cancel := withDefaultTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := newMultipartRequest(ctx, o.base()+"/v1/audio/transcriptions", audioPath, fields)
	if err != nil {
		return transcript.Transcript{}, err
	}
	o.authorize(req)
	var v openAIVerbose
	if err := doJSON(clientOrDefault(o.HTTP), EngineOpenAI, o.APIKey, req, &v); err != nil {
		return transcript.Transcript{}, err
	}

	t := transcript.Transcript{
		Text:     strings.TrimSpace(v.Text),
		Language: NormalizeLanguage(v.Language),
		Duration: float64(v.Duration),
	}
	if t.Language == "" {
		t.Language = lang
	}
	for _, w := range v.Words {
		word := strings.TrimSpace(w.Word)
		if word == "" {
			continue
		}
		t.Words = append(t.Words, transcript.Word{Word: word, Start: float64(w.Start), End: float64(w.End)})
	}
	if len(t.Words) == 0 {
		for _, s := range v.Segments {
			t.Words = append(t.Words, spreadWords(s.Text, float64(s.Start), float64(s.End))...)
		}
	}
	if t.Text == "" && len(t.Words) > 0 {
		t.Text = joinWords(t.Words)
	}
	if t.Duration <= 0 {
		t.Duration = fallbackDuration(audioPath, t.Words)
	}
	return t, nil
}

// spreadWords gives each word of a segment a share of the segment's time
// proportional to its length (plus one for the following space), a better
// guess for caption timing than equal slots.
func spreadWords(text string, start, end float64) []transcript.Word {
	words := strings.Fields(text)
	if len(words) == 0 {
		return nil
	}
	if end < start {
		end = start
	}
	total := 0
	for _, w := range words {
		total += utf8.RuneCountInString(w) + 1
	}
	out := make([]transcript.Word, 0, len(words))
	at, span := start, end-start
	for i, w := range words {
		d := span * float64(utf8.RuneCountInString(w)+1) / float64(total)
		next := at + d
		if i == len(words)-1 {
			next = end
		}
		out = append(out, transcript.Word{Word: w, Start: at, End: next})
		at = next
	}
	return out
}

func joinWords(ws []transcript.Word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Word
	}
	return strings.Join(parts, " ")
}

// fallbackDuration is the WAV length, or the last word's end when the file
// cannot be read.
func fallbackDuration(audioPath string, ws []transcript.Word) float64 {
	if d, err := wavDuration(audioPath); err == nil {
		return d
	}
	if len(ws) > 0 {
		return ws[len(ws)-1].End
	}
	return 0
}

// Health checks that the server answers GET /v1/models with 2xx (which also
// validates the key on api.openai.com).
func (o *OpenAI) Health(ctx context.Context) error {
	ctx, cancel := withDefaultTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.base()+"/v1/models", nil)
	if err != nil {
		return permanentf("openai: bad base URL: %v", err)
	}
	o.authorize(req)
	return doJSON(clientOrDefault(o.HTTP), EngineOpenAI, o.APIKey, req, nil)
}
