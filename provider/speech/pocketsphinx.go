package speech

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"parley/provider/media"
	"parley/rules/transcript"
)

// Defaults from Debian's pocketsphinx-en-us package.
const (
	defaultPocketsphinxModel = "/usr/share/pocketsphinx/model/en-us"
	DefaultPocketsphinxHMM   = defaultPocketsphinxModel + "/en-us"
	DefaultPocketsphinxLM    = defaultPocketsphinxModel + "/en-us.lm.bin"
	DefaultPocketsphinxDict  = defaultPocketsphinxModel + "/cmudict-en-us.dict"
)

// pocketsphinxRate is the sample rate of the en-us acoustic model, and so of
// the audio the pipeline prepares (16 kHz mono 16-bit PCM).
const pocketsphinxRate = 16000

// Pocketsphinx is the offline CMU Sphinx decoder (Debian's libpocketsphinx
// 0.8 / 5prealpha), run in the worker's process. English only, no
// diarization, and far less accurate than the hosted engines: it is the
// engine that always works. Loaded decoders are kept and reused, one per
// transcription running at once; use it by pointer and never copy it.
type Pocketsphinx struct {
	HMM  string // acoustic model directory; defaults to DefaultPocketsphinxHMM
	Dict string // pronunciation dictionary; defaults to DefaultPocketsphinxDict
	LM   string // language model; defaults to DefaultPocketsphinxLM

	once sync.Once
	pool *decoders
}

func (p *Pocketsphinx) Name() string { return EnginePocketsphinx }

// CPUBound: one decoder keeps one core busy.
func (p *Pocketsphinx) CPUBound() {}

// OnlyLanguage is English: the only model Debian ships.
func (p *Pocketsphinx) OnlyLanguage() string { return "en" }

func (p *Pocketsphinx) paths() (hmm, dict, lm string) {
	hmm, dict, lm = p.HMM, p.Dict, p.LM
	if hmm == "" {
		hmm = DefaultPocketsphinxHMM
	}
	if dict == "" {
		dict = DefaultPocketsphinxDict
	}
	if lm == "" {
		lm = DefaultPocketsphinxLM
	}
	return
}

// decoders is p's pool, made on first use; its decoders are freed once p is
// unreachable.
func (p *Pocketsphinx) decoders() *decoders {
	p.once.Do(func() {
		hmm, dict, lm := p.paths()
		p.pool = newDecoders(hmm, dict, lm)
		runtime.AddCleanup(p, (*decoders).close, p.pool)
	})
	return p.pool
}

// Warm loads decoders until p holds n, one for each of n transcriptions at
// once (a worker's CPU slots), and returns when they are loaded: loading the
// models takes most of a second of CPU and ~90 MB each, which a worker then
// pays at its start rather than in its first jobs. A transcription that
// starts meanwhile takes the first decoder loaded.
func (p *Pocketsphinx) Warm(n int) error { return p.decoders().warm(n) }

// Transcribe decodes a 16 kHz mono 16-bit PCM WAV file (what the pipeline
// prepares) with a loaded decoder. Cancelling ctx stops it within tens of
// milliseconds.
func (p *Pocketsphinx) Transcribe(ctx context.Context, audioPath string, opts Options) (transcript.Transcript, error) {
	lang, err := pinnedLanguage(opts)
	if err != nil {
		return transcript.Transcript{}, err
	}
	if lang != "" && lang != "en" {
		return transcript.Transcript{}, fmt.Errorf("%w: the offline engine (pocketsphinx) supports English only, not %q", ErrUnsupportedLanguage, lang)
	}
	layout, err := media.ReadWAVLayout(audioPath)
	if err != nil {
		if errors.Is(err, media.ErrNotWAV) {
			return transcript.Transcript{}, permanentf("pocketsphinx: %v", err)
		}
		return transcript.Transcript{}, fmt.Errorf("pocketsphinx: audio file: %w", err)
	}
	if err := checkPocketsphinxFormat(layout.Format); err != nil {
		return transcript.Transcript{}, err
	}
	f, err := os.Open(audioPath)
	if err != nil {
		return transcript.Transcript{}, fmt.Errorf("pocketsphinx: audio file: %w", err)
	}
	defer f.Close()
	pool := p.decoders()
	d, err := pool.get()
	if err != nil {
		return transcript.Transcript{}, err
	}
	segs, err := d.decode(ctx, io.NewSectionReader(f, layout.DataOffset, layout.DataSize))
	if err != nil && ctx.Err() == nil {
		pool.discard(d) // a decoder that failed is not trusted with another file
		return transcript.Transcript{}, err
	}
	pool.put(d)
	if err != nil {
		return transcript.Transcript{}, err
	}
	words := pocketsphinxWords(segs)
	return transcript.Transcript{
		Text:     joinWords(words),
		Language: "en",
		Words:    words,
		Duration: layout.Seconds(),
	}, nil
}

// checkPocketsphinxFormat refuses, for good, audio the model cannot hear:
// anything but 16 kHz mono 16-bit PCM.
func checkPocketsphinxFormat(fmtChunk [16]byte) error {
	tag := binary.LittleEndian.Uint16(fmtChunk[0:2])
	channels := binary.LittleEndian.Uint16(fmtChunk[2:4])
	rate := binary.LittleEndian.Uint32(fmtChunk[4:8])
	bits := binary.LittleEndian.Uint16(fmtChunk[14:16])
	if tag != 1 || channels != 1 || rate != pocketsphinxRate || bits != 16 {
		return permanentf("pocketsphinx: want 16 kHz mono 16-bit PCM, got format %d, %d channel(s), %d Hz, %d bits", tag, channels, rate, bits)
	}
	return nil
}

// pocketsphinxWords keeps the words of the decoder's segments: fillers (<s>,
// </s>, <sil>, [NOISE], ++GARBAGE++ ...) are dropped and alternate
// pronunciations' suffixes "(2)" removed.
func pocketsphinxWords(segs []segment) []transcript.Word {
	var words []transcript.Word
	last := 0.0
	for _, s := range segs {
		w := s.word
		if i := strings.IndexByte(w, '('); i > 0 && strings.HasSuffix(w, ")") {
			w = w[:i]
		}
		if isFiller(w) {
			continue
		}
		// Keep timings monotonic even if the decoder ever emits an
		// overlap.
		start := max(s.start, last)
		end := max(s.end, start)
		last = end
		words = append(words, transcript.Word{Word: w, Start: start, End: end})
	}
	return words
}

func isFiller(w string) bool {
	if w == "" {
		return true
	}
	switch w[0] {
	case '<', '[', '+':
		return true
	}
	return false
}

// Health checks that the model files exist.
func (p *Pocketsphinx) Health(ctx context.Context) error {
	hmm, dict, lm := p.paths()
	var errs []error
	for _, path := range []string{hmm + "/mdef", hmm + "/means", dict, lm} {
		if _, err := os.Stat(path); err != nil {
			errs = append(errs, fmt.Errorf("pocketsphinx: model file: %w", err))
		}
	}
	return errors.Join(errs...)
}
