package jobs

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/textcheck"
)

// Transcript search: the passages of an account's transcripts that say
// what a person looks for, each linking to the moment it is said.

// SearchLimit is the most jobs a transcript search returns at once.
const SearchLimit = 20

// MaxQueryLength bounds a search's text, in characters.
const MaxQueryLength = 200

// SearchQuery is a transcript search: the text (web search syntax: words,
// "a phrase", or, -word), the kinds of job searched (both when empty), and
// the page: Limit jobs (SearchLimit when zero or above it) below the job id
// Before when it is not zero.
type SearchQuery struct {
	Text   string
	Kinds  []jobspec.Kind
	Before int64
	Limit  int
}

// SearchResult is a page of jobs whose transcripts match, newest first.
type SearchResult struct {
	Jobs []TranscriptMatch `json:"jobs"`
}

// TranscriptMatch is a job whose transcript matches: how many passages
// match and the first few.
type TranscriptMatch struct {
	ID        int64     `json:"id"`
	Service   string    `json:"service"`
	FileName  string    `json:"file_name"`
	CreatedAt time.Time `json:"created_at"`
	Matches   int       `json:"matches"`
	Passages  []Passage `json:"passages"`
}

// Passage is a few seconds of a transcript that match: its bounds, the
// moment its first matching word is said (AtSec, where a player should
// start), and its text in fragments, the matching words apart.
type Passage struct {
	StartSec  float64    `json:"start_sec"`
	EndSec    float64    `json:"end_sec"`
	AtSec     float64    `json:"at_sec"`
	Fragments []Fragment `json:"fragments"`
}

// Fragment is a piece of a passage's text; Match marks a matching word.
type Fragment struct {
	Text  string `json:"text"`
	Match bool   `json:"match"`
}

// SearchTranscripts finds what an account's transcripts say: a query that
// is empty, too long or holds control characters is a VALIDATION_ERROR
// naming q.
func (s *Service) SearchTranscripts(ctx context.Context, accountID string, q SearchQuery) (SearchResult, error) {
	text := strings.TrimSpace(q.Text)
	if text == "" {
		return SearchResult{}, problem.Invalid("q", "is required")
	}
	if err := textcheck.Line(text); err != nil {
		return SearchResult{}, problem.Invalid("q", err.Error())
	}
	if utf8.RuneCountInString(text) > MaxQueryLength {
		return SearchResult{}, problem.Invalid("q", "is longer than 200 characters")
	}
	limit := q.Limit
	if limit <= 0 || limit > SearchLimit {
		limit = SearchLimit
	}
	kinds := q.Kinds
	if len(kinds) == 0 {
		kinds = []jobspec.Kind{jobspec.Transcription, jobspec.Subtitles}
	}
	hits, err := s.d.Jobs.SearchTranscripts(ctx, accountID, text, kinds, q.Before, limit)
	if err != nil {
		return SearchResult{}, err
	}
	out := SearchResult{Jobs: []TranscriptMatch{}}
	for _, h := range hits {
		if n := len(out.Jobs); n == 0 || out.Jobs[n-1].ID != h.JobID {
			out.Jobs = append(out.Jobs, TranscriptMatch{ID: h.JobID, Service: serviceOf(h.Kind), FileName: h.FileName,
				CreatedAt: h.CreatedAt.UTC(), Matches: h.Matches})
		}
		m := &out.Jobs[len(out.Jobs)-1]
		m.Passages = append(m.Passages, NewPassage(h))
	}
	return out, nil
}

// serviceOf names a job kind as the job's own `service` field does.
func serviceOf(kind string) string {
	if kind == jobspec.Subtitles {
		return subtitlesService
	}
	return transcriptionService
}

// NewPassage splits a hit's headline into fragments and finds when its
// first matching word is said: the headline is the passage's words joined
// by single spaces with markers around matches, so the bytes before the
// first marker say which word it is.
func NewPassage(h model.TranscriptHit) Passage {
	p := Passage{StartSec: h.StartSec, EndSec: h.EndSec, AtSec: h.StartSec}
	rest, offset, first := h.Headline, 0, true
	for rest != "" {
		i := strings.Index(rest, model.HitStart)
		if i < 0 {
			p.Fragments = appendFragment(p.Fragments, rest, false)
			break
		}
		p.Fragments = appendFragment(p.Fragments, rest[:i], false)
		offset += i
		rest = rest[i+len(model.HitStart):]
		j := strings.Index(rest, model.HitEnd)
		if j < 0 {
			j = len(rest)
		}
		if first {
			p.AtSec, first = wordAt(h, offset), false
		}
		p.Fragments = appendFragment(p.Fragments, rest[:j], true)
		offset += j
		rest = strings.TrimPrefix(rest[j:], model.HitEnd)
	}
	return p
}

func appendFragment(fs []Fragment, text string, match bool) []Fragment {
	if text == "" {
		return fs
	}
	return append(fs, Fragment{Text: text, Match: match})
}

// wordAt is when the word at byte offset of the passage's text begins.
func wordAt(h model.TranscriptHit, offset int) float64 {
	pos := 0
	for i, w := range h.Words {
		if offset < pos+len(w)+1 && i < len(h.Starts) {
			return h.Starts[i]
		}
		pos += len(w) + 1
	}
	return h.StartSec
}
