// Package jobspec is what a transcription or subtitle job is, defined once: its
// kinds (with every other kind of work Parley runs), its statuses, the stages it is billed for (each with its price-list
// item, its ledger service and its cost on the job), and the rules for which
// media a job accepts. API, service, workflows and activities all read it.
package jobspec

import (
	"fmt"

	"parley/rules/billing"
)

// Kind is what a job does.
type Kind = string

// Kinds of work, every one defined here. Each is the ParleyJobKind search
// attribute of its workflows and, where it is charged, the job kind of the
// ledger's key; jobs' rows hold Transcription and Subtitles. They are
// persisted: never change a value.
const (
	// Transcription and Subtitles are the jobs of this package's rules.
	Transcription Kind = "transcription"
	Subtitles     Kind = "subtitles"
	// SMSMessage is a single send, SMSBatch a batch and its parts,
	// SMSInbound the follow-up of an inbound message, SMSOptOut the events
	// of opt-out changes made through the API or the console.
	SMSMessage Kind = "sms_message"
	SMSBatch   Kind = "sms_batch"
	SMSInbound Kind = "sms_inbound"
	SMSOptOut  Kind = "sms_opt_out"
	// Conversation is a voice conversation's ingest, and the job kind of
	// its ledger charge, keyed (conversation, voice_minute): one per call.
	Conversation Kind = "conversation"
	// VoiceSync and UploadSweep are the scheduled runs, which have no
	// account.
	VoiceSync   Kind = "voice_sync"
	UploadSweep Kind = "upload_sweep"
)

// UploadPrefix is where uploads wait in the object store until a job takes
// them (platform/multipartfile stores them, the upload sweep removes the
// ones no job names); a job's own objects live under jobs/.
const UploadPrefix = "uploads/"

// Status is where a job is in its life.
type Status = string

// Statuses. A job is created queued; done and failed are final, left only by
// a re-burn (done -> burning -> done) or an operator's reset of a failed job.
const (
	Queued       Status = "queued"
	Processing   Status = "processing"
	Transcribing Status = "transcribing"
	Burning      Status = "burning"
	Done         Status = "done"
	Failed       Status = "failed"
)

// Costs are a job's priced stages, in micro-dollars, as stored on the job.
type Costs struct {
	Transcription billing.Micros `bun:"cost_micros"`
	VoiceCleanup  billing.Micros `bun:"cleanup_cost_micros"`
	Burn          billing.Micros `bun:"burn_cost_micros"`
}

// Total is what the stages cost together.
func (c Costs) Total() billing.Micros { return c.Transcription + c.VoiceCleanup + c.Burn }

// Stage is one billed step of a job.
type Stage struct {
	// Name keys the stage in workflows and in the ledger's (job, stage) key.
	Name string
	// PriceItem is the per-minute item of the price list.
	PriceItem string
	// Service is what the ledger books the charge under, as
	// spend_by_service names it.
	Service string
	// cost points at the stage's amount on a job.
	cost func(*Costs) *billing.Micros
}

// Cost is the stage's amount in c.
func (s Stage) Cost(c *Costs) *billing.Micros { return s.cost(c) }

// The stages. The three vocabularies differ for historical reasons (the price
// list says voice_cleanup, the ledger and the profile say voice_isolator);
// this table is the one place that maps them.
var (
	StageTranscription = Stage{Name: "transcription", PriceItem: billing.ItemTranscription, Service: "transcription",
		cost: func(c *Costs) *billing.Micros { return &c.Transcription }}
	StageVoiceCleanup = Stage{Name: "voice_cleanup", PriceItem: billing.ItemVoiceCleanup, Service: "voice_isolator",
		cost: func(c *Costs) *billing.Micros { return &c.VoiceCleanup }}
	StageBurn = Stage{Name: "burn", PriceItem: billing.ItemSubtitleBurn, Service: "subtitle_burn",
		cost: func(c *Costs) *billing.Micros { return &c.Burn }}
)

var stages = []Stage{StageTranscription, StageVoiceCleanup, StageBurn}

// Services are the ledger services of every stage.
func Services() []string {
	out := make([]string, len(stages))
	for i, s := range stages {
		out[i] = s.Service
	}
	return out
}

// StageNamed finds a stage by its name.
func StageNamed(name string) (Stage, bool) {
	for _, s := range stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// Stages are the billed stages of a job of kind k; voice cleanup only when
// it was asked for.
func Stages(k Kind, voiceCleanup bool) []Stage {
	if k != Subtitles {
		return []Stage{StageTranscription}
	}
	if voiceCleanup {
		return []Stage{StageTranscription, StageVoiceCleanup, StageBurn}
	}
	return []Stage{StageTranscription, StageBurn}
}

// StageNames are the names of stages, for workflow inputs.
func StageNames(st []Stage) []string {
	out := make([]string, len(st))
	for i, s := range st {
		out[i] = s.Name
	}
	return out
}

// PerMinute reads the current per-minute price of a price-list item.
type PerMinute func(item string) (billing.Micros, error)

// Price sets the cost of each stage for seconds of media.
func Price(c *Costs, st []Stage, seconds float64, perMinute PerMinute) error {
	for _, s := range st {
		p, err := perMinute(s.PriceItem)
		if err != nil {
			return err
		}
		*s.Cost(c) = billing.ForDuration(seconds, p)
	}
	return nil
}

// Object keys of a job's media, derived from its id so that a retried
// activity overwrites what an earlier attempt wrote.
func SourceKey(jobID int64) string       { return fmt.Sprintf("jobs/%d/source", jobID) }
func AudioKey(jobID int64) string        { return fmt.Sprintf("jobs/%d/audio.wav", jobID) }
func CleanedAudioKey(jobID int64) string { return fmt.Sprintf("jobs/%d/cleaned.wav", jobID) }
func OutputKey(jobID int64, run int) string {
	return fmt.Sprintf("jobs/%d/output-%d.mp4", jobID, run)
}

// ChunkTranscriptKey holds the transcript of the index-th chunk of a job's
// split audio: a chunk retried on another worker overwrites its own object.
// (Splits planned before chunks were read as ranges of the job's audio
// stored each chunk's audio beside it, as jobs/{id}/chunks/{n}.wav.)
func ChunkTranscriptKey(jobID int64, index int) string {
	return fmt.Sprintf("jobs/%d/chunks/%d.json", jobID, index)
}
