package elevenlabs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"parley/provider/elevenlabs"
)

func writeAudio(t *testing.T) (string, []byte) {
	t.Helper()
	audio := bytes.Repeat([]byte("RIFF-not-really-a-wav "), 1000)
	path := filepath.Join(t.TempDir(), "chunk.wav")
	if err := os.WriteFile(path, audio, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, audio
}

// A retried upload sends the whole file again, and the answer decodes
// into the transcription.
func TestSpeechToTextRetriesWithTheWholeFile(t *testing.T) {
	path, audio := writeAudio(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/speech-to-text" || r.Header.Get("xi-api-key") != testKey {
			t.Errorf("request %d: %s %s key %q", n, r.Method, r.URL.Path, r.Header.Get("xi-api-key"))
		}
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			t.Errorf("request %d: %v", n, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f, _, err := r.FormFile("file")
		if err != nil {
			t.Errorf("request %d: no file: %v", n, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got, _ := io.ReadAll(f)
		if !bytes.Equal(got, audio) {
			t.Errorf("request %d: uploaded %d bytes, want the %d of the file", n, len(got), len(audio))
		}
		want := map[string][]string{"model_id": {"scribe_v1"}, "diarize": {"true"}, "timestamps_granularity": {"word"},
			"tag_audio_events": {"false"}, "language_code": {"de"}}
		if !reflect.DeepEqual(r.MultipartForm.Value, want) {
			t.Errorf("request %d: fields %v, want %v", n, r.MultipartForm.Value, want)
		}
		if n == 1 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, `{"language_code":"deu","language_probability":0.9,"text":"Hallo.",
			"words":[{"text":"Hallo.","start":0.1,"end":0.6,"type":"word","speaker_id":"speaker_0","logprob":-0.2}]}`)
	}))
	defer srv.Close()
	var waits sleeps
	got, err := newClient(srv, &waits, 0).SpeechToText(context.Background(), path, elevenlabs.SpeechToTextParams{
		ModelID: "scribe_v1", LanguageCode: "de", Diarize: true, TimestampsGranularity: "word",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := elevenlabs.Transcription{LanguageCode: "deu", LanguageProbability: 0.9, Text: "Hallo.",
		Words: []elevenlabs.Word{{Text: "Hallo.", Start: 0.1, End: 0.6, Type: "word", SpeakerID: "speaker_0"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("transcription = %+v\nwant %+v", got, want)
	}
	if calls.Load() != 2 || !reflect.DeepEqual([]time.Duration(waits), []time.Duration{time.Second}) {
		t.Errorf("%d requests, waits %v; want 2 and one 1s wait", calls.Load(), waits)
	}
}

// A 2xx answer that is not a transcription is ErrBadResponse, not retried.
func TestSpeechToTextBadResponse(t *testing.T) {
	path, _ := writeAudio(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `<html>captive portal</html>`)
	}))
	defer srv.Close()
	_, err := newClient(srv, new(sleeps), 0).SpeechToText(context.Background(), path, elevenlabs.SpeechToTextParams{ModelID: "scribe_v1"})
	if !errors.Is(err, elevenlabs.ErrBadResponse) || calls.Load() != 1 {
		t.Fatalf("err = %v after %d requests, want ErrBadResponse after 1", err, calls.Load())
	}
}

// A transcription in flight holds no conversation API slot: with room for
// one conversation request, a sync still reads while an upload waits.
func TestSpeechToTextHoldsNoConversationSlot(t *testing.T) {
	path, _ := writeAudio(t)
	uploading, conversationRead := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/speech-to-text" {
			close(uploading)
			select {
			case <-conversationRead:
				io.WriteString(w, `{"language_code":"eng","text":"","words":[]}`)
			case <-time.After(5 * time.Second):
				w.WriteHeader(http.StatusInternalServerError)
			}
			return
		}
		io.WriteString(w, `{"conversations":[],"has_more":false}`)
	}))
	defer srv.Close()
	c := elevenlabs.NewClient(elevenlabs.Config{BaseURL: srv.URL, APIKey: testKey, HTTP: srv.Client(), MaxConcurrent: 1, MaxRetries: -1})
	done := make(chan error, 1)
	go func() {
		_, err := c.SpeechToText(context.Background(), path, elevenlabs.SpeechToTextParams{ModelID: "scribe_v1"})
		done <- err
	}()
	<-uploading
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.ListConversations(ctx, elevenlabs.ListParams{})
	close(conversationRead)
	if err != nil {
		t.Fatalf("conversation read beside an upload: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("upload: %v", err)
	}
}
