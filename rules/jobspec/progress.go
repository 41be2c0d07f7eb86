package jobspec

import "slices"

// Progress stages: a job's status, or a finer step inside it. Transcription
// jobs stay "processing" as a status throughout, so their stage is where a
// client sees the steps; "uploading" happens in the client and is never
// stored.
const (
	Cleaning   = "cleaning"   // subtitles with voice cleanup: noise reduction
	Extracting = "extracting" // the engine's audio track is decoded
	Merging    = "merging"    // a split transcription's chunks are joined
)

// StageOrder is the order a job passes its stages in, from queued to
// burning: within one run a job's progress never moves to an earlier stage
// (storage refuses such a write). Transcribing covers the chunks of a split
// transcription, however many run at once.
var StageOrder = []string{Queued, Processing, Cleaning, Extracting, Transcribing, Merging, Burning}

// IsStage reports whether s is a progress stage.
func IsStage(s string) bool { return slices.Contains(StageOrder, s) }
