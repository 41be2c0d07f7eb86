package api

import (
	"encoding/json"
	"path"
	"strings"

	"parley/rules/subtitles"
	"parley/rules/transcript"
	"parley/service/jobs"
	"parley/storage"
)

type exporter struct {
	contentType string
	render      func(storage.Job) ([]byte, error)
}

// exporters renders a done transcription in each export format.
var exporters = map[string]exporter{
	"txt": {"text/plain; charset=utf-8", func(j storage.Job) ([]byte, error) {
		return []byte(transcript.PlainText(transcriptOf(j))), nil
	}},
	"md": {"text/markdown; charset=utf-8", func(j storage.Job) ([]byte, error) {
		return []byte(transcript.Markdown(transcriptOf(j), j.FileName)), nil
	}},
	"srt": {"application/x-subrip; charset=utf-8", func(j storage.Job) ([]byte, error) {
		return []byte(subtitles.FormatSRT(subtitles.Cues(j.Words))), nil
	}},
	"vtt": {"text/vtt; charset=utf-8", func(j storage.Job) ([]byte, error) {
		return []byte(subtitles.FormatVTT(subtitles.Cues(j.Words))), nil
	}},
	"json": {"application/json; charset=utf-8", func(j storage.Job) ([]byte, error) {
		return json.MarshalIndent(exportJSON{
			Transcription: jobs.NewTranscription(j, true),
			Paragraphs:    paragraphs(transcriptOf(j)),
		}, "", "  ")
	}},
}

// exportJSON is the structured payload: the job with words, and the
// paragraphs of the txt export.
type exportJSON struct {
	jobs.Transcription
	Paragraphs []string `json:"paragraphs"`
}

func transcriptOf(j storage.Job) transcript.Transcript {
	t := transcript.Transcript{Text: j.TranscriptText, Words: j.Words}
	if j.LanguageDetected != nil {
		t.Language = *j.LanguageDetected
	}
	if j.DurationSec != nil {
		t.Duration = *j.DurationSec
	}
	return t
}

func paragraphs(t transcript.Transcript) []string {
	out := []string{}
	for _, p := range strings.Split(transcript.PlainText(t), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func trimExt(name string) string {
	if base := strings.TrimSuffix(name, path.Ext(name)); base != "" {
		return base
	}
	return "transcript"
}

// asciiName is the plain filename= fallback of Content-Disposition.
func asciiName(name string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, name)
}
