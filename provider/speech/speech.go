// Package speech turns a 16 kHz mono WAV file into a transcript.Transcript
// through one of several engines: the offline pocketsphinx decoder, an
// OpenAI-compatible transcription endpoint, or ElevenLabs Scribe.
package speech

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"parley/provider/elevenlabs"
	"parley/rules/transcript"
)

// Engine transcribes one audio file. audioPath is always a 16 kHz mono s16
// WAV file.
type Engine interface {
	Name() string
	Transcribe(ctx context.Context, audioPath string, opts Options) (transcript.Transcript, error)
	Health(ctx context.Context) error
}

// Monolingual is an engine that transcribes one language only, so it never
// needs to detect one.
type Monolingual interface {
	OnlyLanguage() string
}

// CPUBound is an engine that decodes on the worker's own CPU, one core per
// transcription, rather than waiting on a hosted service: its work belongs
// on the queue whose slots are the machine's cores.
type CPUBound interface {
	CPUBound()
}

// Warmer is an engine that loads its models into the worker's process:
// Warm loads them for n transcriptions at once ahead of the first.
type Warmer interface {
	Warm(n int) error
}

// Options tune one transcription.
type Options struct {
	// Language is "" or "auto" to let the engine detect the language, or an
	// ISO 639-1 code that pins it.
	Language string
}

// ErrPermanent marks errors that retrying cannot fix: the request was
// rejected (4xx other than 408/429), the language is unsupported, or the
// response could not be understood. Everything else is worth retrying.
var ErrPermanent = errors.New("permanent speech error")

// IsPermanent reports whether err (or anything it wraps) is ErrPermanent.
func IsPermanent(err error) bool { return errors.Is(err, ErrPermanent) }

// ErrUnsupportedLanguage is the permanent error of a pinned language the
// engine cannot transcribe.
var ErrUnsupportedLanguage = fmt.Errorf("%w: unsupported language", ErrPermanent)

func permanentf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrPermanent, fmt.Sprintf(format, args...))
}

// Engine names accepted by Config.Engine.
const (
	EnginePocketsphinx = "pocketsphinx"
	EngineOpenAI       = "openai"
	EngineElevenLabs   = "elevenlabs"
)

// Config selects and configures an engine, typically from the environment.
type Config struct {
	Engine string // pocketsphinx | openai | elevenlabs

	OpenAIBaseURL string
	OpenAIAPIKey  string
	OpenAIModel   string

	ElevenLabsBaseURL string
	ElevenLabsAPIKey  string
	ElevenLabsModel   string
}

// New builds the engine named by cfg.Engine.
func New(cfg Config) (Engine, error) {
	switch strings.ToLower(strings.TrimSpace(cfg.Engine)) {
	case EnginePocketsphinx:
		return &Pocketsphinx{}, nil
	case EngineOpenAI:
		if cfg.OpenAIAPIKey == "" && (cfg.OpenAIBaseURL == "" || sameBase(cfg.OpenAIBaseURL, defaultOpenAIBaseURL)) {
			return nil, errors.New("speech: openai engine needs an API key for api.openai.com")
		}
		return &OpenAI{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, Model: cfg.OpenAIModel}, nil
	case EngineElevenLabs:
		if cfg.ElevenLabsAPIKey == "" {
			return nil, errors.New("speech: elevenlabs engine needs an API key")
		}
		client := elevenlabs.NewClient(elevenlabs.Config{BaseURL: cfg.ElevenLabsBaseURL, APIKey: cfg.ElevenLabsAPIKey})
		return &ElevenLabs{Client: client, Model: cfg.ElevenLabsModel}, nil
	default:
		return nil, fmt.Errorf("speech: unknown engine %q (want pocketsphinx, openai or elevenlabs)", cfg.Engine)
	}
}

// pinnedLanguage returns the ISO code the caller pinned, or "" for automatic
// detection. A value that is not a plausible language code is a permanent
// error: resubmitting it will not help.
func pinnedLanguage(opts Options) (string, error) {
	l := strings.ToLower(strings.TrimSpace(opts.Language))
	if l == "" || l == "auto" {
		return "", nil
	}
	code := NormalizeLanguage(l)
	if !isLangCode(code) {
		return "", fmt.Errorf("%w %q", ErrUnsupportedLanguage, opts.Language)
	}
	return code, nil
}

func isLangCode(s string) bool {
	if len(s) < 2 || len(s) > 3 {
		return false
	}
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}
