package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/subtitles"
	"parley/rules/transcript"
)

// Export is a done transcription rendered in one export format.
type Export struct {
	ContentType string
	// FileName is what the download is called: the upload's name without its
	// extension, the job's id and the format.
	FileName string
	Body     []byte
}

// Export renders one of an account's done transcriptions in format (txt
// when empty; md, srt, vtt, json).
func (s *Service) Export(ctx context.Context, accountID string, id int64, format string) (Export, error) {
	j, err := s.d.Jobs.GetOwned(ctx, accountID, jobspec.Transcription, id)
	if err != nil {
		return Export{}, err
	}
	// An empty format= is the default, as an absent one is.
	if format == "" {
		format = "txt"
	}
	exp, ok := exporters[format]
	if !ok {
		return Export{}, problem.Invalid("format", "must be one of txt, md, srt, vtt, json")
	}
	if j.Status != jobspec.Done {
		return Export{}, problem.New(problem.JobNotDone, map[string]any{"status": j.Status})
	}
	body, err := exp.render(j)
	if err != nil {
		return Export{}, err
	}
	return Export{ContentType: exp.contentType, FileName: fmt.Sprintf("%s-%d.%s", trimExt(j.FileName), j.ID, format), Body: body}, nil
}

type exporter struct {
	contentType string
	render      func(model.Job) ([]byte, error)
}

// exporters renders a done transcription in each export format.
var exporters = map[string]exporter{
	"txt": {"text/plain; charset=utf-8", func(j model.Job) ([]byte, error) {
		return []byte(transcript.PlainText(transcriptOf(j))), nil
	}},
	"md": {"text/markdown; charset=utf-8", func(j model.Job) ([]byte, error) {
		return []byte(transcript.Markdown(transcriptOf(j), j.FileName)), nil
	}},
	"srt": {"application/x-subrip; charset=utf-8", func(j model.Job) ([]byte, error) {
		return []byte(subtitles.FormatSRT(subtitles.Cues(j.Words))), nil
	}},
	"vtt": {"text/vtt; charset=utf-8", func(j model.Job) ([]byte, error) {
		return []byte(subtitles.FormatVTT(subtitles.Cues(j.Words))), nil
	}},
	"json": {"application/json; charset=utf-8", func(j model.Job) ([]byte, error) {
		return json.MarshalIndent(exportJSON{
			Transcription: NewTranscription(j, true),
			Paragraphs:    paragraphs(transcriptOf(j)),
		}, "", "  ")
	}},
}

// exportJSON is the structured payload: the job with words, and the
// paragraphs of the txt export.
type exportJSON struct {
	Transcription
	Paragraphs []string `json:"paragraphs"`
}

func transcriptOf(j model.Job) transcript.Transcript {
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
