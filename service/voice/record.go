package voice

import (
	"time"

	"parley/model"
	"parley/provider/elevenlabs"
	"parley/rules/billing"
)

const (
	// ListOverlap is how far before an agent's mark a sync lists again:
	// whether the provider's call_start_after_unix is inclusive is not
	// documented, and a call may be listed a little after a later one
	// started. Re-listed calls cost a row lookup, not an ingest.
	ListOverlap = time.Hour
	// AnalysisWait is how long after a call started a sync keeps starting
	// its ingest again while its analysis (or charge) is missing; after it,
	// only the post-call webhook fills it in.
	AnalysisWait = 24 * time.Hour
	// MaxRevisits bounds the unsettled calls one sync restarts per agent.
	MaxRevisits = 500
)

// ListAfter is where an agent's walk starts: a little before its mark, or
// backfill ago for an agent never synced.
func ListAfter(mark *time.Time, now time.Time, backfill time.Duration) time.Time {
	if mark == nil {
		return now.Add(-backfill).Truncate(time.Second)
	}
	return mark.Add(-ListOverlap)
}

// Ended reports whether a conversation status means the call is over, so
// its duration is final and it can be priced.
func Ended(status string) bool {
	switch status {
	case model.ConversationProcessing, model.ConversationDone, model.ConversationFailed:
		return true
	}
	return false
}

// statuses maps the provider's conversation statuses onto ours.
var statuses = map[string]string{
	elevenlabs.StatusInitiated:  model.ConversationInitiated,
	elevenlabs.StatusInProgress: model.ConversationInProgress,
	elevenlabs.StatusProcessing: model.ConversationProcessing,
	elevenlabs.StatusDone:       model.ConversationDone,
	elevenlabs.StatusFailed:     model.ConversationFailed,
}

// statusOf is our status for the provider's. One the provider added after
// this code is kept as reported: it does not read as ended, so the call is
// not priced, and a later sync or the webhook brings a known one.
func statusOf(providerStatus string) string {
	if s, ok := statuses[providerStatus]; ok {
		return s
	}
	return providerStatus
}

// Record maps a provider detail onto the row stored for accountID
// (decisions.md, "Voice conversations"); it is the one place the
// provider's shapes become ours. agentName is the provider's name for the
// agent, else the operator's. Transcript turns without text (tool calls
// only) are left out: the transcript is what was said. A call that has
// ended is priced at perMinute per second of duration; the row keeps its
// first price.
func Record(d elevenlabs.Detail, accountID, agentName string, perMinute billing.Micros) model.Conversation {
	start := time.Unix(d.Metadata.StartTimeUnixSecs, 0).UTC()
	row := model.Conversation{
		AccountID: accountID, ProviderID: d.ConversationID, AgentID: d.AgentID, AgentName: agentName,
		ProviderStatus: statusOf(d.Status), DurationSeconds: d.Metadata.CallDurationSecs,
		StartedAt: start, EndedAt: start.Add(time.Duration(d.Metadata.CallDurationSecs) * time.Second),
		MainLanguage: d.Metadata.MainLanguage, HasAudio: d.HasAudio,
		Transcript: []model.VoiceTranscriptTurn{},
	}
	if pc := d.Metadata.PhoneCall; pc != nil {
		switch pc.Direction {
		case elevenlabs.DirectionInbound:
			row.Direction, row.FromNumber, row.ToNumber = model.ConversationInbound, pc.ExternalNumber, pc.AgentNumber
		case elevenlabs.DirectionOutbound:
			row.Direction, row.FromNumber, row.ToNumber = model.ConversationOutbound, pc.AgentNumber, pc.ExternalNumber
		}
	}
	if a := d.Analysis; a != nil {
		row.HasAnalysis = true
		row.SummaryTitle, row.Summary = a.CallSummaryTitle, a.TranscriptSummary
		row.DataCollection = make(map[string]model.VoiceDataItem, len(a.DataCollectionResults))
		for id, r := range a.DataCollectionResults {
			row.DataCollection[id] = model.VoiceDataItem{Value: r.Value, Rationale: r.Rationale}
		}
		row.Evaluation = make(map[string]model.VoiceEvaluation, len(a.EvaluationCriteriaResults))
		for id, r := range a.EvaluationCriteriaResults {
			row.Evaluation[id] = model.VoiceEvaluation{Result: r.Result, Rationale: r.Rationale}
		}
	}
	for _, t := range d.Transcript {
		if t.Message != "" {
			row.Transcript = append(row.Transcript, model.VoiceTranscriptTurn{Role: t.Role, Message: t.Message, TimeInCallSecs: t.TimeInCallSecs})
		}
	}
	if Ended(row.ProviderStatus) {
		cost := billing.ForDuration(float64(row.DurationSeconds), perMinute)
		row.CostMicros = &cost
	}
	return row
}
