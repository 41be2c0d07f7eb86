package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"parley/model"
	"parley/platform/i18n"
	"parley/platform/problem"
	"parley/provider/media"
	"parley/provider/speech"
	"parley/rules/chunking"
	"parley/rules/jobspec"
	"parley/rules/transcript"
	"parley/workflows"
)

// SpeechJobs is the part of the job repository the speech activities use.
type SpeechJobs interface {
	ProgressStore
	Get(ctx context.Context, id int64) (model.Job, error)
	Update(ctx context.Context, j *model.Job, columns ...string) error
	StartChunks(ctx context.Context, id int64, chunks int) (bool, error)
	ChunkDone(ctx context.Context, id int64, chunk int) (bool, error)
	IndexTranscript(ctx context.Context, jobID int64, words []transcript.Word) error
}

// Speech runs the configured engine over a job's audio, whole or in chunks.
type Speech struct {
	Jobs    SpeechJobs
	Objects ObjectStore
	Engine  speech.Engine
	Catalog *i18n.Catalog
	TempDir string
	// Split says which audio is cut into chunks, and how long they are.
	Split chunking.Params
}

// run fetches the chunk's audio and transcribes it in language.
func (a *Speech) run(ctx context.Context, jobID int64, chunk workflows.Chunk, language string) (transcript.Transcript, error) {
	dir, cleanup, err := workDir(a.TempDir, jobID)
	if err != nil {
		return transcript.Transcript{}, err
	}
	defer cleanup()
	wav := filepath.Join(dir, "audio.wav")
	if err := a.fetch(ctx, chunk, wav); err != nil {
		return transcript.Transcript{}, err
	}
	t, err := a.Engine.Transcribe(ctx, wav, speech.Options{Language: language})
	if err != nil {
		if speech.IsPermanent(err) && !isCanceled(ctx, err) {
			if errors.Is(err, speech.ErrUnsupportedLanguage) {
				return t, refuse(a.Catalog, problem.UnsupportedLanguage, map[string]any{"language": language}, err)
			}
			return t, refuse(a.Catalog, problem.EngineFailed, nil, err)
		}
		return t, err
	}
	return t, nil
}

// fetch writes the chunk's audio to wav: its own object, or its range of
// the job's prepared audio under a WAV header of its own.
func (a *Speech) fetch(ctx context.Context, chunk workflows.Chunk, wav string) error {
	r := chunk.Range
	if r == nil {
		return a.Objects.GetFile(ctx, chunk.AudioKey, wav)
	}
	var format [16]byte
	if len(r.Format) != len(format) {
		return fmt.Errorf("chunk %d: a %d-byte WAV format, want %d", chunk.Index, len(r.Format), len(format))
	}
	copy(format[:], r.Format)
	samples, err := a.Objects.Open(ctx, r.Key, r.Offset, r.Size)
	if err != nil {
		return fmt.Errorf("read %s: %w", r.Key, err)
	}
	defer samples.Close()
	return media.WriteWAV(wav, format, samples, r.Size)
}

// store writes a transcript onto its job.
func (a *Speech) store(ctx context.Context, jobID int64, t transcript.Transcript) (workflows.TranscribeResult, error) {
	job, err := a.Jobs.Get(ctx, jobID)
	if err != nil {
		return workflows.TranscribeResult{}, err
	}
	job.TranscriptText, job.Words = t.Text, t.Words
	job.LanguageDetected = &t.Language
	if job.DurationSec == nil && t.Duration > 0 {
		job.DurationSec = &t.Duration
	}
	if err := a.Jobs.Update(ctx, &job, "transcript_text", "words", "language_detected", "duration_sec"); err != nil {
		return workflows.TranscribeResult{}, err
	}
	// Indexed for search as it is stored: a retry of the merge indexes again.
	if err := a.Jobs.IndexTranscript(ctx, jobID, t.Words); err != nil {
		return workflows.TranscribeResult{}, err
	}
	return workflows.TranscribeResult{Words: len(t.Words), Language: t.Language}, nil
}

// SplitAudio plans how a job's audio is transcribed. Audio that a.Split
// does not cut is one chunk, the audio itself, and is not even fetched;
// longer audio is cut in the middle of pauses, each chunk a range of the
// audio that its TranscribeChunk reads (nothing is stored). The language is the job's, or the engine's only one, or ""
// for the engine to detect. The job's progress then counts its chunks
// (TranscribeChunk marks each).
func (a *Speech) SplitAudio(ctx context.Context, in workflows.SplitAudioInput) (workflows.SplitResult, error) {
	defer keepAlive(ctx)()
	enterStage(ctx, a.Jobs, in.JobID, jobspec.Transcribing, 0)
	plan, err := a.splitAudio(ctx, in)
	if err != nil {
		return plan, err
	}
	if _, err := a.Jobs.StartChunks(ctx, in.JobID, len(plan.Chunks)); err != nil {
		warnProgress(ctx, in.JobID, err)
	}
	return plan, nil
}

func (a *Speech) splitAudio(ctx context.Context, in workflows.SplitAudioInput) (workflows.SplitResult, error) {
	job, err := a.Jobs.Get(ctx, in.JobID)
	if err != nil {
		return workflows.SplitResult{}, err
	}
	plan := workflows.SplitResult{Language: a.language(job.LanguageRequested), Engine: a.Engine.Name(), TaskQueue: a.chunkQueue()}
	if !a.Split.Splits(in.DurationSec) {
		plan.Chunks = []workflows.Chunk{{AudioKey: in.AudioKey, EndSec: in.DurationSec}}
		return plan, nil
	}
	layout, spans, err := a.planChunks(ctx, in.AudioKey)
	if err != nil {
		return workflows.SplitResult{}, err
	}
	for i, s := range spans {
		offset, size, err := layout.Span(s.Start, s.End)
		if err != nil {
			return workflows.SplitResult{}, err
		}
		r := &workflows.AudioRange{Key: in.AudioKey, Offset: offset, Size: size, Format: layout.Format[:]}
		plan.Chunks = append(plan.Chunks, workflows.Chunk{Index: i, Range: r, StartSec: s.Start, EndSec: s.End})
	}
	return plan, nil
}

// chunkQueue is where the engine's chunks run: the CPU queue for an engine
// that decodes on the worker's cores, the speech queue for a hosted one.
func (a *Speech) chunkQueue() string {
	if _, ok := a.Engine.(speech.CPUBound); ok {
		return workflows.CPUTaskQueue
	}
	return workflows.SpeechTaskQueue
}

// planChunks measures the levels of the 16 kHz mono s16 WAV file at key
// (what PrepareAudio gives) as it streams from the store, and plans its
// chunks; the last ends at the last sample.
func (a *Speech) planChunks(ctx context.Context, key string) (media.WAVLayout, []chunking.Span, error) {
	layout, err := storedLayout(ctx, a.Objects, key)
	if err != nil {
		return layout, nil, err
	}
	if layout.BlockAlign != 2 {
		return layout, nil, fmt.Errorf("split %s: want a WAV file of mono 16-bit samples, got %d-byte blocks", key, layout.BlockAlign)
	}
	r, err := a.Objects.Open(ctx, key, layout.DataOffset, layout.DataSize)
	if err != nil {
		return layout, nil, err
	}
	defer r.Close()
	samples := &counted{r: r}
	levels, err := chunking.Levels(samples, layout.ByteRate/2)
	if err == nil && samples.n != layout.DataSize {
		err = fmt.Errorf("read %d of %d bytes of samples", samples.n, layout.DataSize)
	}
	if err != nil {
		return layout, nil, fmt.Errorf("split %s: %w", key, err)
	}
	spans := chunking.Plan(levels, a.Split)
	spans[len(spans)-1].End = layout.Seconds()
	return layout, spans, nil
}

// counted is a reader that counts the bytes read through it.
type counted struct {
	r io.Reader
	n int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// language is what the chunks are transcribed in: the job's pinned
// language, the engine's only one, or "" for the engine to detect.
func (a *Speech) language(requested string) string {
	if requested != "" && requested != "auto" {
		return requested
	}
	if m, ok := a.Engine.(speech.Monolingual); ok {
		return m.OnlyLanguage()
	}
	return ""
}

// TranscribeChunk runs the engine over one chunk and stores its transcript,
// times counted from the chunk's start, under the chunk's own key: a chunk
// retried on another worker is transcribed again and stored once, and
// counted once in the job's progress (ChunkDone's mark is per chunk).
func (a *Speech) TranscribeChunk(ctx context.Context, in workflows.TranscribeChunkInput) (workflows.ChunkResult, error) {
	defer keepAlive(ctx)()
	t, err := a.run(ctx, in.JobID, in.Chunk, in.Language)
	if err != nil {
		return workflows.ChunkResult{}, err
	}
	if t.Language == "" {
		t.Language = in.Language
	}
	body, err := json.Marshal(t)
	if err != nil {
		return workflows.ChunkResult{}, err
	}
	key := jobspec.ChunkTranscriptKey(in.JobID, in.Chunk.Index)
	if _, err := a.Objects.Put(ctx, key, bytes.NewReader(body), int64(len(body)), "application/json"); err != nil {
		return workflows.ChunkResult{}, err
	}
	if _, err := a.Jobs.ChunkDone(ctx, in.JobID, in.Chunk.Index); err != nil {
		warnProgress(ctx, in.JobID, err)
	}
	return workflows.ChunkResult{TranscriptKey: key, Language: t.Language, Words: len(t.Words)}, nil
}

// MergeChunks joins the stored chunk transcripts into the job's transcript
// in the language decided for the job. It reads only what the chunks
// stored, so running it again writes the same transcript.
func (a *Speech) MergeChunks(ctx context.Context, in workflows.MergeChunksInput) (workflows.TranscribeResult, error) {
	defer keepAlive(ctx)()
	enterStage(ctx, a.Jobs, in.JobID, jobspec.Merging, 0)
	parts := make([]chunking.Part, len(in.Chunks))
	for i, c := range in.Chunks {
		parts[i].Span = chunking.Span{Start: c.StartSec, End: c.EndSec}
		if err := a.readJSON(ctx, c.TranscriptKey, &parts[i].Transcript); err != nil {
			return workflows.TranscribeResult{}, err
		}
	}
	return a.store(ctx, in.JobID, chunking.Merge(parts, in.Language, in.DurationSec))
}

func (a *Speech) readJSON(ctx context.Context, key string, v any) error {
	r, err := a.Objects.Open(ctx, key, 0, -1)
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	defer r.Close()
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	return nil
}
