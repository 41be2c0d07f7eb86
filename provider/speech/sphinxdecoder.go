package speech

// The decoder is Debian's libpocketsphinx (0.8 / 5prealpha), linked with cgo
// and driven the way its pocketsphinx_continuous tool drives it for -infile,
// so that a file decodes to the same words and times as the tool gives. One
// loaded decoder is reused for many files: loading the models takes ~0.4 s,
// which a recording cut into chunks would otherwise pay once per chunk.

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <stdlib.h>
#include <string.h>
#include <pocketsphinx.h>
#include <err.h>
#include <feat.h>
#include <cmn.h>

// parley_decoder is a loaded decoder and the cepstral mean normalization
// state it had when loaded, which every file starts from again.
typedef struct {
	ps_decoder_t *ps;
	int32 frate;
	mfcc_t *mean, *sum;
	int32 nframe;
} parley_decoder;

static parley_decoder *parley_decoder_new(const char *hmm, const char *dict, const char *lm) {
	err_set_logfp(NULL);
	cmd_ln_t *config = cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-dict", dict, "-lm", lm, NULL);
	if (config == NULL) {
		return NULL;
	}
	ps_decoder_t *ps = ps_init(config); // keeps its own reference to config
	int32 frate = cmd_ln_int32_r(config, "-frate");
	cmd_ln_free_r(config);
	if (ps == NULL) {
		return NULL;
	}
	cmn_t *cmn = ps_get_feat(ps)->cmn_struct;
	parley_decoder *d = calloc(1, sizeof *d);
	d->mean = calloc(cmn->veclen, sizeof(mfcc_t));
	d->sum = calloc(cmn->veclen, sizeof(mfcc_t));
	if (d->mean == NULL || d->sum == NULL) {
		abort();
	}
	memcpy(d->mean, cmn->cmn_mean, cmn->veclen * sizeof(mfcc_t));
	memcpy(d->sum, cmn->sum, cmn->veclen * sizeof(mfcc_t));
	d->nframe = cmn->nframe;
	d->ps = ps;
	d->frate = frate;
	return d;
}

// parley_decoder_start begins a file as a fresh decoder would: times count
// from its first sample and the normalization forgets the previous file.
static int parley_decoder_start(parley_decoder *d) {
	if (ps_start_stream(d->ps) < 0) {
		return -1;
	}
	cmn_t *cmn = ps_get_feat(d->ps)->cmn_struct;
	memcpy(cmn->cmn_mean, d->mean, cmn->veclen * sizeof(mfcc_t));
	memcpy(cmn->sum, d->sum, cmn->veclen * sizeof(mfcc_t));
	cmn->nframe = d->nframe;
	return ps_start_utt(d->ps);
}

static void parley_decoder_free(parley_decoder *d) {
	ps_free(d->ps);
	free(d->mean);
	free(d->sum);
	free(d);
}
*/
import "C"

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"unsafe"
)

// blockSamples is how much audio is fed to the decoder at a time, and how
// often it asks whether speech is still going on: pocketsphinx_continuous's
// 2048, since the utterances (and so the words) depend on it. It is also how
// often a cancelled context is noticed (~30 ms of decoding).
const blockSamples = 2048

// segment is one word (or filler) as the decoder aligned it, in seconds from
// the start of the file.
type segment struct {
	word       string
	start, end float64
}

// decoder is one loaded libpocketsphinx decoder. It is not safe for
// concurrent use.
type decoder struct {
	d *C.parley_decoder
}

// loading serializes model loading: the library keeps some global state
// (its logging) that concurrent loads would share.
var loading sync.Mutex

func newDecoder(hmm, dict, lm string) (*decoder, error) {
	cs := []*C.char{C.CString(hmm), C.CString(dict), C.CString(lm)}
	defer func() {
		for _, s := range cs {
			C.free(unsafe.Pointer(s))
		}
	}()
	loading.Lock()
	d := C.parley_decoder_new(cs[0], cs[1], cs[2])
	loading.Unlock()
	if d == nil {
		return nil, fmt.Errorf("pocketsphinx: cannot load the models (hmm %s, dict %s, lm %s)", hmm, dict, lm)
	}
	return &decoder{d: d}, nil
}

func (d *decoder) free() { C.parley_decoder_free(d.d) }

// decode reads 16-bit little-endian mono samples from pcm until EOF. Like
// pocketsphinx_continuous it cuts an utterance wherever the decoder's voice
// activity detection says speech stopped, and collects each utterance's
// words when it ends. A cancelled ctx stops it within one block; the
// decoder stays usable.
func (d *decoder) decode(ctx context.Context, pcm io.Reader) ([]segment, error) {
	ps := d.d.ps
	if C.parley_decoder_start(d.d) < 0 {
		return nil, errors.New("pocketsphinx: cannot start an utterance")
	}
	var out []segment
	frate := float64(d.d.frate)
	collect := func() {
		// Iterating to the end frees the iterator.
		for it := C.ps_seg_iter(ps); it != nil; it = C.ps_seg_next(it) {
			var sf, ef C.int
			C.ps_seg_frames(it, &sf, &ef)
			out = append(out, segment{word: C.GoString(C.ps_seg_word(it)), start: float64(sf) / frate, end: float64(ef) / frate})
		}
	}
	r := bufio.NewReaderSize(pcm, 64<<10)
	raw := make([]byte, 2*blockSamples)
	samples := make([]int16, blockSamples)
	inUtterance := false
	for {
		if err := ctx.Err(); err != nil {
			C.ps_end_utt(ps)
			return nil, fmt.Errorf("pocketsphinx: %w", err)
		}
		n, err := io.ReadFull(r, raw)
		n /= 2
		if n > 0 {
			for i := range n {
				samples[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
			}
			if C.ps_process_raw(ps, (*C.int16)(unsafe.Pointer(&samples[0])), C.size_t(n), 0, 0) < 0 {
				C.ps_end_utt(ps)
				return nil, errors.New("pocketsphinx: decoding failed")
			}
			speaking := C.ps_get_in_speech(ps) != 0
			if speaking {
				inUtterance = true
			} else if inUtterance {
				C.ps_end_utt(ps)
				collect()
				C.ps_start_utt(ps)
				inUtterance = false
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			C.ps_end_utt(ps)
			return nil, fmt.Errorf("pocketsphinx: read audio: %w", err)
		}
	}
	C.ps_end_utt(ps)
	if inUtterance {
		collect()
	}
	return out, nil
}

// decoders keeps loaded decoders for reuse: as many as were ever in use at
// once, which the callers bound (a worker runs them in its CPU slots), or
// as many as warm loaded ahead of them.
type decoders struct {
	hmm, dict, lm string

	mu sync.Mutex
	// loaded is signalled when warm has put a decoder in idle or given up.
	loaded *sync.Cond
	idle   []*decoder
	// made counts the decoders loaded or being loaded and not freed;
	// warming those that warm is loading.
	made, warming int
	closed        bool
}

func newDecoders(hmm, dict, lm string) *decoders {
	p := &decoders{hmm: hmm, dict: dict, lm: lm}
	p.loaded = sync.NewCond(&p.mu)
	return p
}

// get returns an idle decoder, or the one warm is loading, or loads one.
func (p *decoders) get() (*decoder, error) {
	p.mu.Lock()
	for len(p.idle) == 0 && p.warming > 0 {
		p.loaded.Wait()
	}
	if n := len(p.idle); n > 0 {
		d := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return d, nil
	}
	p.made++
	p.mu.Unlock()
	d, err := newDecoder(p.hmm, p.dict, p.lm)
	if err != nil {
		p.mu.Lock()
		p.made--
		p.mu.Unlock()
	}
	return d, err
}

// put keeps d for the next file, or frees it once the pool is closed.
func (p *decoders) put(d *decoder) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		d.free()
		return
	}
	p.idle = append(p.idle, d)
}

// discard frees d, which failed, instead of keeping it.
func (p *decoders) discard(d *decoder) {
	d.free()
	p.mu.Lock()
	p.made--
	p.mu.Unlock()
}

// warm loads decoders, one after the other, until the pool holds n, and
// returns once none is being loaded: a transcription that starts meanwhile
// takes the first one loaded rather than loading its own.
func (p *decoders) warm(n int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.closed && p.made < n {
		p.made++
		p.warming++
		p.mu.Unlock()
		d, err := newDecoder(p.hmm, p.dict, p.lm)
		p.mu.Lock()
		p.warming--
		p.loaded.Broadcast()
		if err != nil {
			p.made--
			return err
		}
		if p.closed {
			d.free()
			break
		}
		p.idle = append(p.idle, d)
	}
	for p.warming > 0 {
		p.loaded.Wait()
	}
	return nil
}

// close frees the idle decoders; those in use are freed when put back.
func (p *decoders) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, d := range p.idle {
		d.free()
	}
	p.idle = nil
}
