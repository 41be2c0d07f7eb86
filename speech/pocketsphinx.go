package speech

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"parley/transcript"
)

// Defaults from Debian's pocketsphinx-en-us package.
const (
	defaultPocketsphinxBinary = "pocketsphinx_continuous"
	defaultPocketsphinxModel  = "/usr/share/pocketsphinx/model/en-us"
	DefaultPocketsphinxHMM    = defaultPocketsphinxModel + "/en-us"
	DefaultPocketsphinxLM     = defaultPocketsphinxModel + "/en-us.lm.bin"
	DefaultPocketsphinxDict   = defaultPocketsphinxModel + "/cmudict-en-us.dict"
)

// Pocketsphinx runs the offline CMU Sphinx decoder (Debian's pocketsphinx
// 0.8 / 5prealpha command-line tool). English only, no diarization, and far
// less accurate than the hosted engines: it is the engine that always works.
type Pocketsphinx struct {
	Binary string // defaults to pocketsphinx_continuous on PATH
	HMM    string // acoustic model directory; defaults to DefaultPocketsphinxHMM
	Dict   string // pronunciation dictionary; defaults to DefaultPocketsphinxDict
	LM     string // language model; defaults to DefaultPocketsphinxLM
}

func (p *Pocketsphinx) Name() string { return EnginePocketsphinx }

// OnlyLanguage is English: the only model Debian ships.
func (p *Pocketsphinx) OnlyLanguage() string { return "en" }

func (p *Pocketsphinx) paths() (bin, hmm, dict, lm string) {
	bin, hmm, dict, lm = p.Binary, p.HMM, p.Dict, p.LM
	if bin == "" {
		bin = defaultPocketsphinxBinary
	}
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

// Transcribe decodes the whole file in one process. Cancelling ctx kills the
// process.
func (p *Pocketsphinx) Transcribe(ctx context.Context, audioPath string, opts Options) (transcript.Transcript, error) {
	lang, err := pinnedLanguage(opts)
	if err != nil {
		return transcript.Transcript{}, err
	}
	if lang != "" && lang != "en" {
		return transcript.Transcript{}, fmt.Errorf("%w: the offline engine (pocketsphinx) supports English only, not %q", ErrUnsupportedLanguage, lang)
	}
	if _, err := os.Stat(audioPath); err != nil {
		return transcript.Transcript{}, fmt.Errorf("pocketsphinx: audio file: %w", err)
	}
	bin, hmm, dict, lm := p.paths()
	// The decoder's log goes to stderr (no -logfn) so that a failure can
	// be explained; only its tail is kept.
	cmd := exec.CommandContext(ctx, bin,
		"-infile", audioPath, "-time", "yes",
		"-hmm", hmm, "-dict", dict, "-lm", lm)
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return transcript.Transcript{}, fmt.Errorf("pocketsphinx: %w", ctxErr)
		}
		return transcript.Transcript{}, fmt.Errorf("pocketsphinx: %w: %s", err, lastLines(stderr.String(), 3))
	}
	words := parsePocketsphinx(stdout.Bytes())
	return transcript.Transcript{
		Text:     joinWords(words),
		Language: "en",
		Words:    words,
		Duration: fallbackDuration(audioPath, words),
	}, nil
}

// parsePocketsphinx reads the "-time yes" output: for each utterance a
// hypothesis line followed by "word start end confidence" lines with times in
// seconds from the start of the file. Fillers (<s>, </s>, <sil>, [NOISE],
// ++GARBAGE++ ...) are dropped and alternate-pronunciation suffixes "(2)"
// removed.
func parsePocketsphinx(out []byte) []transcript.Word {
	var words []transcript.Word
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	last := 0.0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || !numeric(f[1]) || !numeric(f[2]) || !numeric(f[3]) {
			continue
		}
		w := f[0]
		if i := strings.IndexByte(w, '('); i > 0 && strings.HasSuffix(w, ")") {
			w = w[:i]
		}
		if isFiller(w) {
			continue
		}
		start, err1 := strconv.ParseFloat(f[1], 64)
		end, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		// Keep timings monotonic even if the decoder ever emits an
		// overlap.
		start = max(start, last)
		end = max(end, start)
		last = end
		words = append(words, transcript.Word{Word: w, Start: start, End: end})
	}
	return words
}

func numeric(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c >= '0' && c <= '9' || c == '-' || c == '.'
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

// Health checks that the binary is on PATH and the model files exist.
func (p *Pocketsphinx) Health(ctx context.Context) error {
	bin, hmm, dict, lm := p.paths()
	if _, err := exec.LookPath(bin); err != nil {
		return fmt.Errorf("pocketsphinx: %s not found: %w", bin, err)
	}
	var errs []error
	for _, path := range []string{hmm + "/mdef", hmm + "/means", dict, lm} {
		if _, err := os.Stat(path); err != nil {
			errs = append(errs, fmt.Errorf("pocketsphinx: model file: %w", err))
		}
	}
	return errors.Join(errs...)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
