// Package transcript holds the normalized output of every speech engine and
// the pure functions that turn it into files (captions and exports) and
// line a corrected text up with its timed words (Revise).
package transcript

// Word is one recognized word with its timing in seconds from the start of
// the audio. Speaker is empty when the engine does not diarize.
type Word struct {
	Word    string  `json:"word"`
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	Speaker string  `json:"speaker,omitempty"`
}

// Transcript is what an engine returns for one audio file.
type Transcript struct {
	Text     string  `json:"text"`
	Language string  `json:"language"`
	Words    []Word  `json:"words"`
	Duration float64 `json:"duration"`
}
