package voice

import (
	"time"

	"parley/model"
	"parley/rules/billing"
)

// ServiceName is the service field of every conversation.
const ServiceName = "voice"

// View is the public voice conversation, defined once: GET /conversations
// serves it, GET /conversations/{id} and the conversation.ready event add
// the transcript (Detail). Strings the provider left out (the numbers of a
// call without a phone leg, the summary before the analysis) are "".
type View struct {
	ID              int64     `json:"id"`
	Service         string    `json:"service"`
	Direction       string    `json:"direction"`
	AgentName       string    `json:"agent_name"`
	ToNumber        string    `json:"to_number"`
	FromNumber      string    `json:"from_number"`
	DurationSeconds int       `json:"duration_seconds"`
	CostUSD         string    `json:"cost_usd"`
	MainLanguage    string    `json:"main_language"`
	SummaryTitle    string    `json:"summary_title"`
	Summary         string    `json:"summary"`
	HasAudio        bool      `json:"has_audio"`
	StartedAt       time.Time `json:"started_at"`
	EndedAt         time.Time `json:"ended_at"`
	// DataCollection and Evaluation are null until the provider's
	// analysis exists, then objects (possibly empty).
	DataCollection map[string]model.VoiceDataItem   `json:"data_collection"`
	Evaluation     map[string]model.VoiceEvaluation `json:"evaluation"`
}

// Detail is a conversation with its transcript.
type Detail struct {
	View
	Transcript []model.VoiceTranscriptTurn `json:"transcript"`
}

// ViewOf is the public shape of a stored conversation.
func ViewOf(c model.Conversation) View {
	v := View{
		ID: c.ID, Service: ServiceName, Direction: c.Direction, AgentName: c.AgentName,
		ToNumber: c.ToNumber, FromNumber: c.FromNumber, DurationSeconds: c.DurationSeconds,
		CostUSD: billing.Micros(0).CostString(), MainLanguage: c.MainLanguage,
		SummaryTitle: c.SummaryTitle, Summary: c.Summary, HasAudio: c.HasAudio,
		StartedAt: c.StartedAt.UTC(), EndedAt: c.EndedAt.UTC(),
	}
	if c.CostMicros != nil {
		v.CostUSD = c.CostMicros.CostString()
	}
	if c.HasAnalysis {
		v.DataCollection, v.Evaluation = c.DataCollection, c.Evaluation
		if v.DataCollection == nil {
			v.DataCollection = map[string]model.VoiceDataItem{}
		}
		if v.Evaluation == nil {
			v.Evaluation = map[string]model.VoiceEvaluation{}
		}
	}
	return v
}

// DetailOf is the public shape of a stored conversation with its
// transcript (an empty one as []).
func DetailOf(c model.Conversation) Detail {
	d := Detail{View: ViewOf(c), Transcript: c.Transcript}
	if d.Transcript == nil {
		d.Transcript = []model.VoiceTranscriptTurn{}
	}
	return d
}
