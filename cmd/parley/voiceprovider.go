package main

import (
	"context"
	"errors"
	"time"

	"parley/devstack/localvoice"
	"parley/platform/config"
	"parley/provider/elevenlabs"
)

const (
	// demoAgentID is the agent the stand-in's demo conversations belong to;
	// make dev maps it to the dev account.
	demoAgentID = "agent_demo_reception"
)

// voiceProvider serves the local stand-in for the ElevenLabs Agents API on
// PARLEY_VOICE_PROVIDER_ADDR, seeded with demo conversations, for make dev.
func voiceProvider(ctx context.Context) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if !cfg.VoiceConfigured() {
		return errors.New("PARLEY_ELEVENLABS_API_KEY must be set: it is the key the stand-in accepts")
	}
	log, err := newLogger(cfg.LogLevel)
	if err != nil {
		return err
	}
	standIn := localvoice.New(localvoice.Config{
		// As strict as the plan the default client limit assumes, so a
		// worker sending more is answered 429 as the provider would.
		APIKey: cfg.ElevenLabsAPIKey, MaxConcurrent: cfg.ElevenLabsConcurrency,
	})
	for _, d := range demoConversations(time.Now()) {
		standIn.Put(d)
	}
	log.WithField("agent_id", demoAgentID).Info("demo conversations loaded")
	return serveStandIn(ctx, log, "local voice provider", "PARLEY_VOICE_PROVIDER_ADDR", cfg.VoiceProviderAddr, standIn)
}

// demoConversations are two calls of the demo agent from the last hours:
// an inbound booking with its analysis, and an outbound reminder whose
// analysis is still running.
func demoConversations(now time.Time) []elevenlabs.Detail {
	phone := func(direction, external string) *elevenlabs.PhoneCall {
		return &elevenlabs.PhoneCall{Direction: direction, Type: "twilio", AgentNumber: "+14155550100", ExternalNumber: external}
	}
	return []elevenlabs.Detail{
		{
			AgentID: demoAgentID, AgentName: "Demo reception", ConversationID: "conv_demo_booking", Status: elevenlabs.StatusDone, HasAudio: true,
			Metadata: elevenlabs.Metadata{
				StartTimeUnixSecs: now.Add(-2 * time.Hour).Unix(), CallDurationSecs: 74, MainLanguage: "en",
				PhoneCall: phone(elevenlabs.DirectionInbound, "+14155550199"),
			},
			Transcript: []elevenlabs.TranscriptItem{
				{Role: "agent", Message: "Good evening, Trattoria Sole, how can I help?"},
				{Role: "user", Message: "A table for four on Friday at half past seven, please.", TimeInCallSecs: 4},
				{Role: "agent", Message: "Booked: four on Friday at 19:30. May I have a name?", TimeInCallSecs: 11},
				{Role: "user", Message: "Rossi. Thanks!", TimeInCallSecs: 17},
			},
			Analysis: &elevenlabs.Analysis{
				CallSuccessful: "success", CallSummaryTitle: "Table booking for Friday",
				TranscriptSummary: "The caller booked a table for four on Friday at 19:30 under the name Rossi.",
				EvaluationCriteriaResults: map[string]elevenlabs.EvaluationCriteriaResult{
					"booking_made": {CriteriaID: "booking_made", Result: "success", Rationale: "The agent confirmed the booking."},
				},
				DataCollectionResults: map[string]elevenlabs.DataCollectionResult{
					"party_size": {DataCollectionID: "party_size", Value: 4, Rationale: "The caller asked for four."},
					"guest_name": {DataCollectionID: "guest_name", Value: "Rossi", Rationale: "The caller gave the name Rossi."},
				},
			},
		},
		{
			AgentID: demoAgentID, AgentName: "Demo reception", ConversationID: "conv_demo_reminder", Status: elevenlabs.StatusProcessing,
			Metadata: elevenlabs.Metadata{
				StartTimeUnixSecs: now.Add(-time.Hour).Unix(), CallDurationSecs: 32, MainLanguage: "en",
				PhoneCall: phone(elevenlabs.DirectionOutbound, "+14155550123"),
			},
			Transcript: []elevenlabs.TranscriptItem{
				{Role: "agent", Message: "Hello, this is Trattoria Sole reminding you of your table tonight at eight."},
				{Role: "user", Message: "Thank you, we will be there.", TimeInCallSecs: 6},
			},
		},
	}
}
