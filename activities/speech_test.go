package activities

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"parley/model"
	"parley/provider/media"
	"parley/provider/speech"
	"parley/rules/chunking"
	"parley/rules/jobspec"
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

// speechJobs serves the job a split reads; the split calls nothing else.
type speechJobs struct {
	SpeechJobs
	job model.Job
}

func (s speechJobs) Get(context.Context, int64) (model.Job, error) { return s.job, nil }

// memObjects is an object store in memory.
type memObjects map[string][]byte

func (m memObjects) GetFile(_ context.Context, key, path string) error {
	b, ok := m[key]
	if !ok {
		return fmt.Errorf("no object %s", key)
	}
	return os.WriteFile(path, b, 0o600)
}

func (m memObjects) PutFile(_ context.Context, key, path, _ string) error {
	b, err := os.ReadFile(path)
	m[key] = b
	return err
}

func (m memObjects) Put(_ context.Context, key string, r io.Reader, _ int64, _ string) (int64, error) {
	b, err := io.ReadAll(r)
	m[key] = b
	return int64(len(b)), err
}

func (m memObjects) Open(_ context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	b, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("no object %s", key)
	}
	return io.NopCloser(bytes.NewReader(b[offset : offset+length])), nil
}

func (m memObjects) Stat(_ context.Context, key string) (model.ObjectInfo, error) {
	b, ok := m[key]
	if !ok {
		return model.ObjectInfo{}, fmt.Errorf("no object %s", key)
	}
	return model.ObjectInfo{Size: int64(len(b))}, nil
}

// A split stores nothing: its chunks are ranges of the job's audio, each
// read back as a WAV file of its own, and together they are every sample
// of the audio once, in order.
func TestSplitChunksAreRangesOfTheAudio(t *testing.T) {
	const rate, seconds = 16000, 200
	samples := make([]byte, 2*rate*seconds)
	for i := range rate * seconds {
		if i/rate%10 < 8 { // 8 s of a tone, 2 s of silence
			binary.LittleEndian.PutUint16(samples[2*i:], uint16(int16(8000*math.Sin(float64(i)/5))))
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "audio.wav")
	var format [16]byte
	binary.LittleEndian.PutUint16(format[0:], 1)      // PCM
	binary.LittleEndian.PutUint16(format[2:], 1)      // mono
	binary.LittleEndian.PutUint32(format[4:], rate)   // sample rate
	binary.LittleEndian.PutUint32(format[8:], 2*rate) // byte rate
	binary.LittleEndian.PutUint16(format[12:], 2)     // block align
	binary.LittleEndian.PutUint16(format[14:], 16)    // bits
	if err := media.WriteWAV(src, format, bytes.NewReader(samples), int64(len(samples))); err != nil {
		t.Fatal(err)
	}
	objects := memObjects{}
	key := jobspec.AudioKey(7)
	if err := objects.PutFile(context.Background(), key, src, ""); err != nil {
		t.Fatal(err)
	}
	a := &Speech{Jobs: speechJobs{job: model.Job{ID: 7, LanguageRequested: "en"}}, Objects: objects, Engine: &speech.Pocketsphinx{},
		TempDir: dir, Split: chunking.Params{Above: 60, Length: 60}}
	plan, err := a.splitAudio(context.Background(), workflows.SplitAudioInput{JobID: 7, AudioKey: key, DurationSec: seconds})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Chunks) < 3 || len(objects) != 1 {
		t.Fatalf("%d chunks, %d objects stored; want several chunks and only the audio", len(plan.Chunks), len(objects))
	}
	var joined []byte
	for i, c := range plan.Chunks {
		if c.AudioKey != "" || c.Range == nil || c.Range.Key != key {
			t.Fatalf("chunk %d: %+v, want a range of %s", i, c, key)
		}
		wav := filepath.Join(dir, fmt.Sprintf("chunk-%d.wav", i))
		if err := a.fetch(context.Background(), c, wav); err != nil {
			t.Fatal(err)
		}
		l, err := media.ReadWAVLayout(wav)
		if err != nil || l.Format != format {
			t.Fatalf("chunk %d: layout %+v, %v", i, l, err)
		}
		if math.Abs(l.Seconds()-(c.EndSec-c.StartSec)) > 1.0/rate {
			t.Errorf("chunk %d holds %.4f s, planned %.4f-%.4f", i, l.Seconds(), c.StartSec, c.EndSec)
		}
		b, _ := os.ReadFile(wav)
		joined = append(joined, b[l.DataOffset:]...)
	}
	if !bytes.Equal(joined, samples) {
		t.Fatalf("the chunks hold %d bytes of samples, not the audio's %d in order", len(joined), len(samples))
	}
}
