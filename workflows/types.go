package workflows

// JobInput names the job a workflow or activity works on. Payloads carry IDs
// and object keys, never media.
type JobInput struct {
	JobID int64
}

// SetStatusInput moves a job from one of From to To.
type SetStatusInput struct {
	JobID int64
	From  []string
	To    string
}

// ChargeInput posts the charges of a job's stages, all or nothing.
type ChargeInput struct {
	JobID  int64
	Stages []string
}

// FinishInput ends a job: Code is empty on success, else a problem code;
// Message, when set, is the client-safe English text for it.
type FinishInput struct {
	JobID   int64
	Code    string
	Message string
}

// DownloadResult is what a URL job's download learned.
type DownloadResult struct {
	MediaKey    string
	DurationSec float64
}

// AudioInput names a job and the audio object an activity should use.
type AudioInput struct {
	JobID    int64
	AudioKey string
}

// AudioResult is an audio object made for a job.
type AudioResult struct {
	AudioKey string
}

// TranscribeResult summarizes the transcript the activity stored.
type TranscribeResult struct {
	Words    int
	Language string
}

// BurnInput asks for one burn run of a subtitle job.
type BurnInput struct {
	JobID int64
	Run   int
}

// BurnResult is the object a burn run wrote.
type BurnResult struct {
	OutputKey string
}

// ReburnInput starts the run-th re-burn of a done subtitle job.
type ReburnInput struct {
	JobID int64
	Run   int
}

// ReburnFailedInput records a failed re-burn, leaving the job done.
type ReburnFailedInput struct {
	JobID   int64
	Code    string
	Message string
}
