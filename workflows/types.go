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

// PrepareAudioInput asks for the engine's audio track of a job's media.
type PrepareAudioInput struct {
	JobID int64
	// SourceKey is the media (or the cleaned track) to extract it from.
	SourceKey string
}

// CleanAudioInput asks for a job's media with its background noise reduced.
type CleanAudioInput struct {
	JobID     int64
	SourceKey string
}

// AudioResult is an audio object made for a job.
type AudioResult struct {
	AudioKey string
	// DurationSec is measured from the decoded samples (PrepareAudio), never
	// taken from what the container claims.
	DurationSec float64
}

// RepriceInput prices a job again for the duration its audio decoded to.
type RepriceInput struct {
	JobID       int64
	DurationSec float64
}

// TranscribeResult summarizes the transcript the activity stored.
type TranscribeResult struct {
	Words    int
	Language string
}

// SplitAudioInput asks for a job's audio cut into chunks at its pauses.
type SplitAudioInput struct {
	JobID       int64
	AudioKey    string
	DurationSec float64
}

// Chunk is one part of a job's audio and where it lies in the whole: the
// whole audio's object when it was not split (AudioKey), or its bytes in it
// (Range). Splits planned before Range existed stored each chunk as its
// own object, under AudioKey.
type Chunk struct {
	Index    int
	AudioKey string      `json:",omitempty"`
	Range    *AudioRange `json:",omitempty"`
	StartSec float64
	EndSec   float64
}

// AudioRange is a chunk's samples in the job's prepared audio: Size bytes
// from Offset in the WAV object Key, whose format (its fmt chunk's 16 bytes)
// is Format. The chunk is read with a ranged read and given its own WAV
// header, so the split stores no second copy of the audio.
type AudioRange struct {
	Key          string
	Offset, Size int64
	Format       []byte
}

// SplitResult is how a job's audio is transcribed: its chunks, and the
// language to transcribe them in ("" when the engine must detect it).
type SplitResult struct {
	Chunks   []Chunk
	Language string
	// Engine names the speech engine the workers run, for the summaries
	// operators read.
	Engine string
	// TaskQueue is where the chunks run: CPUTaskQueue for the offline
	// engine, SpeechTaskQueue for a hosted one.
	TaskQueue string
}

// TranscribeChunkInput asks the engine for the transcript of one chunk.
type TranscribeChunkInput struct {
	JobID    int64
	Chunk    Chunk
	Language string
}

// ChunkResult is the stored transcript of one chunk.
type ChunkResult struct {
	TranscriptKey string
	Language      string
	Words         int
}

// MergeChunksInput asks for the chunks' transcripts to be joined into the
// job's transcript.
type MergeChunksInput struct {
	JobID       int64
	Chunks      []MergedChunk
	Language    string
	DurationSec float64
}

// MergedChunk is a stored chunk transcript and where its chunk lies.
type MergedChunk struct {
	TranscriptKey string
	StartSec      float64
	EndSec        float64
}

// BurnInput asks for one burn run of a subtitle job.
type BurnInput struct {
	JobID int64
	Run   int
	// SourceKey is the video; CleanedAudioKey, when set, replaces its sound.
	SourceKey       string
	CleanedAudioKey string
}

// PublishInput makes a burn run's output the job's video.
type PublishInput struct {
	JobID     int64
	OutputKey string
}

// BurnResult is the object a burn run wrote.
type BurnResult struct {
	OutputKey string
}

// ReburnInput starts the run-th re-burn of a done subtitle job.
type ReburnInput struct {
	JobID int64
	Run   int
	// SourceKey and CleanedAudioKey are the job's video and cleaned track.
	SourceKey       string
	CleanedAudioKey string
}

// ReburnFailedInput records a failed re-burn, leaving the job done.
type ReburnFailedInput struct {
	JobID   int64
	Code    string
	Message string
}
