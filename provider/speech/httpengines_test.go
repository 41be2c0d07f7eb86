package speech

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"parley/provider/elevenlabs"
)

const testKey = "sk-test-SECRET-123"

// newElevenLabs is the ElevenLabs engine at a test server, without the
// client's own retries: each answer below is the engine's to classify.
func newElevenLabs(baseURL, key string) *ElevenLabs {
	return &ElevenLabs{Client: elevenlabs.NewClient(elevenlabs.Config{BaseURL: baseURL, APIKey: key, MaxRetries: -1})}
}

// checkMultipart parses the upload and returns its text fields; it fails the
// test if the file part is not the audio we sent.
func checkMultipart(t *testing.T, r *http.Request, wantAudio []byte) map[string][]string {
	t.Helper()
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		t.Errorf("Content-Type = %q", r.Header.Get("Content-Type"))
	}
	if r.ContentLength <= int64(len(wantAudio)) {
		t.Errorf("ContentLength = %d, want > %d", r.ContentLength, len(wantAudio))
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		t.Fatalf("ParseMultipartForm: %v", err)
	}
	f, fh, err := r.FormFile("file")
	if err != nil {
		t.Fatalf("no file part: %v", err)
	}
	defer f.Close()
	got, _ := io.ReadAll(f)
	if !bytes.Equal(got, wantAudio) {
		t.Errorf("uploaded file differs: %d bytes, want %d", len(got), len(wantAudio))
	}
	if !strings.HasSuffix(fh.Filename, ".wav") {
		t.Errorf("filename = %q", fh.Filename)
	}
	return r.MultipartForm.Value
}

func TestOpenAITranscribe(t *testing.T) {
	path, audio := writeSilentWAV(t, 3)
	var gotFields map[string][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
			t.Errorf("got %s %s", r.Method, r.URL.Path)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
			t.Errorf("Authorization = %q", got)
		}
		gotFields = checkMultipart(t, r, audio)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"task":"transcribe","language":"english","duration":2.95,
			"text":" Hello world, again.",
			"words":[{"word":" Hello","start":0.1,"end":0.5},{"word":"world,","start":0.6,"end":1.0},{"word":"again.","start":1.2,"end":1.9}],
			"segments":[{"id":0,"start":0.0,"end":2.0,"text":" Hello world, again."}]}`)
	}))
	defer srv.Close()

	o := &OpenAI{BaseURL: srv.URL + "/v1/", APIKey: testKey, Model: "whisper-large-v3"}
	tr, err := o.Transcribe(context.Background(), path, Options{Language: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Text != "Hello world, again." || tr.Language != "en" || tr.Duration != 2.95 {
		t.Errorf("transcript = %+v", tr)
	}
	if len(tr.Words) != 3 || tr.Words[0].Word != "Hello" || tr.Words[2].End != 1.9 {
		t.Errorf("words = %+v", tr.Words)
	}
	if got := gotFields["model"]; len(got) != 1 || got[0] != "whisper-large-v3" {
		t.Errorf("model = %v", got)
	}
	if got := gotFields["response_format"]; len(got) != 1 || got[0] != "verbose_json" {
		t.Errorf("response_format = %v", got)
	}
	if got := strings.Join(gotFields["timestamp_granularities[]"], ","); !strings.Contains(got, "word") {
		t.Errorf("timestamp_granularities[] = %v", got)
	}
	if _, ok := gotFields["language"]; ok {
		t.Errorf("language sent although not pinned: %v", gotFields["language"])
	}

	if _, err := o.Transcribe(context.Background(), path, Options{Language: "de"}); err != nil {
		t.Fatal(err)
	}
	if got := gotFields["language"]; len(got) != 1 || got[0] != "de" {
		t.Errorf("pinned language = %v, want [de]", got)
	}
}

func TestOpenAISegmentFallback(t *testing.T) {
	path, _ := writeSilentWAV(t, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"language":"fr","duration":"4.0","text":"Bonjour à tous. Merci.",
			"segments":[{"start":0.5,"end":2.0,"text":" Bonjour à tous."},{"start":2.5,"end":3.0,"text":" Merci."}]}`)
	}))
	defer srv.Close()
	tr, err := (&OpenAI{BaseURL: srv.URL}).Transcribe(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Language != "fr" || tr.Duration != 4 || len(tr.Words) != 4 {
		t.Fatalf("transcript = %+v", tr)
	}
	if tr.Words[0].Start != 0.5 || tr.Words[2].End != 2.0 || tr.Words[3].Word != "Merci." || tr.Words[3].Start != 2.5 {
		t.Errorf("words = %+v", tr.Words)
	}
}

func TestHTTPErrorsClassified(t *testing.T) {
	path, _ := writeSilentWAV(t, 1)
	cases := []struct {
		status    int
		body      string
		permanent bool
	}{
		{400, `{"error":{"message":"Invalid language 'xx'"}}`, true},
		{401, `{"error":{"message":"Incorrect API key provided: ` + testKey + `"}}`, true},
		{403, `forbidden`, true},
		{404, `not found`, true},
		{413, `too large`, true},
		{408, `timeout`, false},
		{429, `{"error":{"message":"Rate limit reached"}}`, false},
		{500, `oops`, false},
		{502, `<html>bad gateway</html>`, false},
		{503, strings.Repeat("overloaded ", 500), false},
		{200, `{"text": "unterminated`, true},
		{200, `<html>captive portal</html>`, true},
	}
	for _, tc := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}))
		engines := []Engine{
			&OpenAI{BaseURL: srv.URL, APIKey: testKey},
			newElevenLabs(srv.URL, testKey),
		}
		for _, e := range engines {
			_, err := e.Transcribe(context.Background(), path, Options{})
			if err == nil {
				t.Errorf("%s status %d: no error", e.Name(), tc.status)
				continue
			}
			if IsPermanent(err) != tc.permanent {
				t.Errorf("%s status %d: permanent=%v, want %v (%v)", e.Name(), tc.status, IsPermanent(err), tc.permanent, err)
			}
			msg := err.Error()
			if strings.Contains(msg, testKey) {
				t.Errorf("%s status %d: error leaks the API key: %s", e.Name(), tc.status, msg)
			}
			if tc.status != 200 && !strings.Contains(msg, fmt.Sprint(tc.status)) {
				t.Errorf("%s: error lacks the status: %s", e.Name(), msg)
			}
			if len(msg) > 600 {
				t.Errorf("%s: error message not bounded (%d bytes)", e.Name(), len(msg))
			}
			var apiErr *APIError
			if tc.status != 200 && !errors.As(err, &apiErr) {
				t.Errorf("%s: want *APIError, got %T", e.Name(), err)
			}
		}
		srv.Close()
	}
}

func TestHTTPTransportErrorsRetryable(t *testing.T) {
	path, _ := writeSilentWAV(t, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	url := srv.URL
	srv.Close() // connection refused from now on
	_, err := (&OpenAI{BaseURL: url, APIKey: testKey}).Transcribe(context.Background(), path, Options{})
	if err == nil || IsPermanent(err) {
		t.Fatalf("connection refused: want retryable error, got %v", err)
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = newElevenLabs(slow.URL, testKey).Transcribe(ctx, path, Options{})
	if err == nil || IsPermanent(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout: want retryable deadline error, got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("ctx deadline not honoured: took %v", time.Since(start))
	}
}

func TestElevenLabsTranscribe(t *testing.T) {
	path, audio := writeSilentWAV(t, 2)
	var gotFields map[string][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/speech-to-text" {
			t.Errorf("got %s %s", r.Method, r.URL.Path)
		}
		if got := r.Header.Get("xi-api-key"); got != testKey {
			t.Errorf("xi-api-key = %q", got)
		}
		if r.Header.Get("Authorization") != "" {
			t.Errorf("unexpected Authorization header")
		}
		gotFields = checkMultipart(t, r, audio)
		io.WriteString(w, `{"language_code":"eng","language_probability":0.98,"text":"Hi there. (laughs) Yes.",
		  "words":[
			{"text":"Hi","start":0.0,"end":0.3,"type":"word","speaker_id":"speaker_0","logprob":-0.1},
			{"text":" ","start":0.3,"end":0.35,"type":"spacing","speaker_id":"speaker_0"},
			{"text":"there.","start":0.35,"end":0.8,"type":"word","speaker_id":"speaker_0"},
			{"text":"(laughs)","start":0.8,"end":1.2,"type":"audio_event","speaker_id":"speaker_1"},
			{"text":"Yes.","start":1.3,"end":1.6,"type":"word","speaker_id":"speaker_1"}]}`)
	}))
	defer srv.Close()

	e := newElevenLabs(srv.URL, testKey)
	tr, err := e.Transcribe(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Language != "en" || tr.Text != "Hi there. (laughs) Yes." || tr.Duration != 2 {
		t.Errorf("transcript = %+v", tr)
	}
	if len(tr.Words) != 3 || tr.Words[1].Word != "there." || tr.Words[2].Speaker != "speaker_1" || tr.Words[0].Speaker != "speaker_0" {
		t.Errorf("words = %+v", tr.Words)
	}
	want := map[string]string{"model_id": "scribe_v1", "diarize": "true", "timestamps_granularity": "word", "tag_audio_events": "false"}
	for k, v := range want {
		if got := gotFields[k]; len(got) != 1 || got[0] != v {
			t.Errorf("field %s = %v, want %s", k, got, v)
		}
	}
	if _, ok := gotFields["language_code"]; ok {
		t.Errorf("language_code sent although not pinned")
	}
	if _, err := e.Transcribe(context.Background(), path, Options{Language: "he"}); err != nil {
		t.Fatal(err)
	}
	if got := gotFields["language_code"]; len(got) != 1 || got[0] != "he" {
		t.Errorf("language_code = %v", got)
	}
}

func TestHealth(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			t.Errorf("health: %s %s", r.Method, r.URL.Path)
		}
		if r.Header.Get("Authorization") == "Bearer "+testKey || r.Header.Get("xi-api-key") == testKey {
			io.WriteString(w, `{"data":[]}`)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	ctx := context.Background()
	if err := (&OpenAI{BaseURL: srv.URL, APIKey: testKey}).Health(ctx); err != nil {
		t.Errorf("openai health: %v", err)
	}
	if err := newElevenLabs(srv.URL, testKey).Health(ctx); err != nil {
		t.Errorf("elevenlabs health: %v", err)
	}
	if err := (&OpenAI{BaseURL: srv.URL, APIKey: "wrong"}).Health(ctx); err == nil || !IsPermanent(err) {
		t.Errorf("openai health with bad key: %v", err)
	}
	if err := newElevenLabs(srv.URL, "wrong").Health(ctx); err == nil || !IsPermanent(err) {
		t.Errorf("elevenlabs health with bad key: %v", err)
	}
}
