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

// Ended reports whether the provider's status means the call is over, so
// its duration is final and it can be priced.
func Ended(status string) bool {
	switch status {
	case elevenlabs.StatusProcessing, elevenlabs.StatusDone, elevenlabs.StatusFailed:
		return true
	}
	return false
}

// Record maps a provider detail onto the row stored for accountID
// (decisions.md, "Voice conversations"). agentName is the provider's name
// for the agent, else the operator's. A call that has ended is priced at
// perMinute per second of duration; the row keeps its first price.
func Record(d elevenlabs.Detail, accountID, agentName string, perMinute billing.Micros) model.Conversation {
	d.AgentName = agentName
	c := d.Conversation()
	row := model.Conversation{
		AccountID: accountID, ProviderID: c.ProviderID, AgentID: c.AgentID, AgentName: c.AgentName,
		ProviderStatus: d.Status, Direction: c.Direction, FromNumber: c.FromNumber, ToNumber: c.ToNumber,
		DurationSeconds: c.DurationSeconds, StartedAt: c.StartedAt, EndedAt: c.EndedAt, MainLanguage: c.MainLanguage,
		SummaryTitle: c.SummaryTitle, Summary: c.Summary, HasAudio: c.HasAudio, HasAnalysis: c.HasAnalysis,
		DataCollection: c.DataCollection, Evaluation: c.Evaluation, Transcript: c.Transcript,
	}
	if Ended(d.Status) {
		cost := billing.ForDuration(float64(c.DurationSeconds), perMinute)
		row.CostMicros = &cost
	}
	return row
}
