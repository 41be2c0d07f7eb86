package activities

import (
	"testing"

	"parley/provider/speech"
	"parley/workflows"
)

// The offline engine's chunks go to the queue bounded by the cores, a
// hosted engine's to the one bounded by its own setting.
func TestChunkQueue(t *testing.T) {
	for _, tc := range []struct {
		engine speech.Engine
		want   string
	}{
		{&speech.Pocketsphinx{}, workflows.CPUTaskQueue},
		{&speech.OpenAI{}, workflows.SpeechTaskQueue},
		{&speech.ElevenLabs{}, workflows.SpeechTaskQueue},
	} {
		if got := (&Speech{Engine: tc.engine}).chunkQueue(); got != tc.want {
			t.Errorf("%s: chunks on %s, want %s", tc.engine.Name(), got, tc.want)
		}
	}
}
