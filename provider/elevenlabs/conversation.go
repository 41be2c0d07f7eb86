package elevenlabs

import "time"

// Call directions in our record.
const (
	DirectionInbound  = "inbound"
	DirectionOutbound = "outbound"
)

// Conversation is our provider-neutral record of a call. Its JSON names are
// those of the public API's voice conversation, as it is stored (JSONB
// columns included) and served in that shape.
type Conversation struct {
	ProviderID string `json:"provider_id"`
	AgentID    string `json:"agent_id"`
	AgentName  string `json:"agent_name"`
	// Direction is inbound or outbound, "" when the call had no phone leg.
	Direction       string    `json:"direction"`
	FromNumber      string    `json:"from_number"`
	ToNumber        string    `json:"to_number"`
	DurationSeconds int       `json:"duration_seconds"`
	StartedAt       time.Time `json:"started_at"`
	EndedAt         time.Time `json:"ended_at"`
	MainLanguage    string    `json:"main_language"`
	SummaryTitle    string    `json:"summary_title"`
	Summary         string    `json:"summary"`
	// DataCollection and Evaluation are nil until the analysis exists, and
	// non-nil (possibly empty) once it does.
	DataCollection map[string]DataItem   `json:"data_collection"`
	Evaluation     map[string]Evaluation `json:"evaluation"`
	HasAudio       bool                  `json:"has_audio"`
	HasAnalysis    bool                  `json:"has_analysis"`
	Transcript     []Turn                `json:"transcript"`
}

// DataItem is one collected value with the provider's reasoning.
type DataItem struct {
	Value     any    `json:"value"`
	Rationale string `json:"rationale"`
}

// Evaluation is one criterion's verdict (success, failure or unknown).
type Evaluation struct {
	Result    string `json:"result"`
	Rationale string `json:"rationale"`
}

// Turn is one transcript item.
type Turn struct {
	Role           string  `json:"role"`
	Message        string  `json:"message"`
	TimeInCallSecs float64 `json:"time_in_call_secs"`
}

// Conversation maps the provider's detail onto our record (decisions.md,
// "Voice conversations"). Transcript turns without text (tool calls only)
// are left out: the API's transcript is what was said.
func (d Detail) Conversation() Conversation {
	start := time.Unix(d.Metadata.StartTimeUnixSecs, 0).UTC()
	c := Conversation{
		ProviderID:      d.ConversationID,
		AgentID:         d.AgentID,
		AgentName:       d.AgentName,
		DurationSeconds: d.Metadata.CallDurationSecs,
		StartedAt:       start,
		EndedAt:         start.Add(time.Duration(d.Metadata.CallDurationSecs) * time.Second),
		MainLanguage:    d.Metadata.MainLanguage,
		HasAudio:        d.HasAudio,
		Transcript:      []Turn{},
	}
	if pc := d.Metadata.PhoneCall; pc != nil {
		switch pc.Direction {
		case DirectionInbound:
			c.Direction, c.FromNumber, c.ToNumber = DirectionInbound, pc.ExternalNumber, pc.AgentNumber
		case DirectionOutbound:
			c.Direction, c.FromNumber, c.ToNumber = DirectionOutbound, pc.AgentNumber, pc.ExternalNumber
		}
	}
	if a := d.Analysis; a != nil {
		c.HasAnalysis = true
		c.SummaryTitle = a.CallSummaryTitle
		c.Summary = a.TranscriptSummary
		c.DataCollection = make(map[string]DataItem, len(a.DataCollectionResults))
		for id, r := range a.DataCollectionResults {
			c.DataCollection[id] = DataItem{Value: r.Value, Rationale: r.Rationale}
		}
		c.Evaluation = make(map[string]Evaluation, len(a.EvaluationCriteriaResults))
		for id, r := range a.EvaluationCriteriaResults {
			c.Evaluation[id] = Evaluation{Result: r.Result, Rationale: r.Rationale}
		}
	}
	for _, t := range d.Transcript {
		if t.Message == "" {
			continue
		}
		c.Transcript = append(c.Transcript, Turn{Role: t.Role, Message: t.Message, TimeInCallSecs: t.TimeInCallSecs})
	}
	return c
}
