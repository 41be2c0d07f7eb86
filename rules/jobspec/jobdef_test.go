package jobspec

import (
	"errors"
	"testing"

	"parley/rules/billing"
)

func TestStagesOfEachKind(t *testing.T) {
	tests := []struct {
		kind    Kind
		cleanup bool
		want    []string
	}{
		{Transcription, false, []string{"transcription"}},
		{Transcription, true, []string{"transcription"}}, // cleanup is a subtitle stage only
		{Subtitles, false, []string{"transcription", "burn"}},
		{Subtitles, true, []string{"transcription", "voice_cleanup", "burn"}},
	}
	for _, tt := range tests {
		got := StageNames(Stages(tt.kind, tt.cleanup))
		if len(got) != len(tt.want) {
			t.Fatalf("%s cleanup=%v: %v, want %v", tt.kind, tt.cleanup, got, tt.want)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s cleanup=%v: %v, want %v", tt.kind, tt.cleanup, got, tt.want)
			}
		}
	}
}

// One stage, three names: the price list's item, the ledger's service and
// the job's cost column must stay tied together.
func TestStageVocabularies(t *testing.T) {
	var c Costs
	*StageVoiceCleanup.Cost(&c) = 7
	*StageBurn.Cost(&c) = 11
	*StageTranscription.Cost(&c) = 13
	if c.VoiceCleanup != 7 || c.Burn != 11 || c.Transcription != 13 || c.Total() != 31 {
		t.Fatalf("cost columns crossed: %+v", c)
	}
	if StageVoiceCleanup.PriceItem != "voice_cleanup" || StageVoiceCleanup.Service != "voice_isolator" {
		t.Errorf("voice cleanup: %+v", StageVoiceCleanup)
	}
	for _, name := range []string{"transcription", "voice_cleanup", "burn"} {
		if s, ok := StageNamed(name); !ok || s.Name != name {
			t.Errorf("StageNamed(%q) = %+v, %v", name, s, ok)
		}
	}
	if _, ok := StageNamed("voice_isolator"); ok {
		t.Error("a ledger service is not a stage name")
	}
}

func TestPriceBillsEverySecondAtThePerMinutePrice(t *testing.T) {
	prices := map[string]billing.Micros{"transcription": 6000, "voice_cleanup": 10000, "subtitle_burn": 20000}
	var c Costs
	err := Price(&c, Stages(Subtitles, true), 90, func(item string) (billing.Micros, error) { return prices[item], nil })
	if err != nil {
		t.Fatal(err)
	}
	// 90 s is 1.5 minutes: 9000 + 15000 + 30000 micro-dollars.
	if c.Transcription != 9000 || c.VoiceCleanup != 15000 || c.Burn != 30000 {
		t.Fatalf("costs %+v", c)
	}
	boom := errors.New("no price")
	if err := Price(&c, Stages(Transcription, false), 1, func(string) (billing.Micros, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

// Kinds are persisted (ledger keys, search attributes, job rows): a value
// never changes once written.
func TestKindsKeepTheirValues(t *testing.T) {
	for got, want := range map[Kind]string{
		Transcription: "transcription",
		Subtitles:     "subtitles",
		SMSMessage:    "sms_message",
		SMSBatch:      "sms_batch",
		SMSInbound:    "sms_inbound",
		SMSOptOut:     "sms_opt_out",
		Conversation:  "conversation",
		VoiceSync:     "voice_sync",
		UploadSweep:   "upload_sweep",
	} {
		if got != want {
			t.Errorf("kind %q is persisted as %q", got, want)
		}
	}
}
