// Package mediatest is for tests only: generated speech and video, WAV
// reading and SI-SNR. It needs ffmpeg built with flite and libx264.
package mediatest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// GenerateSpeech synthesises text with flite (a voice pocketsphinx
// recognises) into out; the container follows out's extension.
func GenerateSpeech(ctx context.Context, text, out string) error {
	return ffmpeg(ctx, "-f", "lavfi", "-i", "flite=voice=slt:text="+filterValue(text), out)
}

// VideoOpts describes a generated test video.
type VideoOpts struct {
	Seconds       float64
	Width, Height int
	SpeechText    string // spoken with flite; "" means no audio stream
	Noise         bool   // add white noise to the speech
}

// GenerateVideo writes an H.264 + AAC mp4 with a moving test pattern.
func GenerateVideo(ctx context.Context, out string, opts VideoOpts) error {
	if opts.Seconds <= 0 {
		opts.Seconds = 3
	}
	if opts.Width <= 0 || opts.Height <= 0 {
		opts.Width, opts.Height = 640, 360
	}
	dur := strconv.FormatFloat(opts.Seconds, 'f', 3, 64)
	graph := fmt.Sprintf("testsrc2=size=%dx%d:rate=30:duration=%s,format=yuv420p[v]", opts.Width, opts.Height, dur)
	args := []string{"-filter_complex"}
	maps := []string{"-map", "[v]"}
	if opts.SpeechText != "" {
		graph += fmt.Sprintf(";flite=voice=slt:text=%s,aresample=48000,apad,atrim=end=%s", filterValue(opts.SpeechText), dur)
		if opts.Noise {
			graph += fmt.Sprintf("[s];anoisesrc=color=white:amplitude=0.05:sample_rate=48000:seed=1:duration=%s[n];[s][n]amix=inputs=2:normalize=0", dur)
		}
		// The AAC encoder takes fixed-size frames; flite emits large ones.
		graph += ",asetnsamples=n=1024"
		graph += "[a]"
		maps = append(maps, "-map", "[a]", "-c:a", "aac", "-ac", "1")
	}
	args = append(args, graph)
	args = append(args, maps...)
	args = append(args, "-c:v", "libx264", "-preset", "ultrafast", "-t", dur, "-movflags", "+faststart", out)
	return ffmpeg(ctx, args...)
}

// ffmpeg runs ffmpeg quietly, with its error output in the error.
func ffmpeg(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "ffmpeg", append([]string{"-nostdin", "-hide_banner", "-y", "-v", "error"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ffmpeg: %w: %s", err, out)
	}
	return nil
}

// PCM16Header is the 44-byte header of a 16-bit PCM WAV file of channels
// at rate samples per second, whose data chunk declares dataSize bytes: the
// samples follow it. The RIFF size wraps when dataSize claims more than a
// WAV file holds, as a writer that cannot seek back leaves it.
func PCM16Header(channels, rate int, dataSize uint32) []byte {
	le := binary.LittleEndian
	b := append([]byte("RIFF"), le.AppendUint32(nil, 36+dataSize)...)
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, 1) // PCM
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(2*channels*rate)) // byte rate
	b = le.AppendUint16(b, uint16(2*channels))      // block align
	b = le.AppendUint16(b, 16)                      // bits
	b = append(b, "data"...)
	return le.AppendUint32(b, dataSize)
}

// ReadWAVMono reads a PCM (8/16/24/32-bit) or 32-bit float WAV file and
// returns its samples in [-1, 1], channels averaged, and the sample rate.
func ReadWAVMono(path string) ([]float32, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, 0, errors.New("wav: not a RIFF/WAVE file")
	}
	var format, channels, bits int
	var rate int
	var data []byte
	for p := 12; p+8 <= len(b); {
		id := string(b[p : p+4])
		size := int(binary.LittleEndian.Uint32(b[p+4 : p+8]))
		body := b[p+8:]
		if size > len(body) || size < 0 {
			size = len(body) // streamed WAVs leave the size unset
		}
		body = body[:size]
		switch id {
		case "fmt ":
			if size < 16 {
				return nil, 0, errors.New("wav: short fmt chunk")
			}
			format = int(binary.LittleEndian.Uint16(body[0:2]))
			channels = int(binary.LittleEndian.Uint16(body[2:4]))
			rate = int(binary.LittleEndian.Uint32(body[4:8]))
			bits = int(binary.LittleEndian.Uint16(body[14:16]))
			if format == 0xFFFE && size >= 26 {
				format = int(binary.LittleEndian.Uint16(body[24:26]))
			}
		case "data":
			data = body
		}
		p += 8 + size + size%2
	}
	if channels == 0 || data == nil {
		return nil, 0, errors.New("wav: missing fmt or data chunk")
	}
	width := bits / 8
	if width == 0 || !(format == 1 || (format == 3 && bits == 32)) {
		return nil, 0, fmt.Errorf("wav: unsupported format %d/%d bits", format, bits)
	}
	frame := width * channels
	n := len(data) / frame
	out := make([]float32, n)
	for i := 0; i < n; i++ {
		var sum float64
		for c := 0; c < channels; c++ {
			s := data[i*frame+c*width:]
			var v float64
			switch {
			case format == 3:
				v = float64(math.Float32frombits(binary.LittleEndian.Uint32(s)))
			case bits == 8:
				v = (float64(s[0]) - 128) / 128
			case bits == 16:
				v = float64(int16(binary.LittleEndian.Uint16(s))) / 32768
			case bits == 24:
				v = float64(int32(uint32(s[0])<<8|uint32(s[1])<<16|uint32(s[2])<<24)) / 2147483648
			case bits == 32:
				v = float64(int32(binary.LittleEndian.Uint32(s))) / 2147483648
			}
			sum += v
		}
		out[i] = float32(sum / float64(channels))
	}
	return out, rate, nil
}

// SISNR is the scale-invariant signal-to-noise ratio in dB of test against
// the reference clean, over their common length.
func SISNR(clean, test []float32) float64 {
	n := min(len(clean), len(test))
	if n == 0 {
		return math.Inf(-1)
	}
	var mc, mt float64
	for i := 0; i < n; i++ {
		mc += float64(clean[i])
		mt += float64(test[i])
	}
	mc /= float64(n)
	mt /= float64(n)
	var dot, cc float64
	for i := 0; i < n; i++ {
		c, t := float64(clean[i])-mc, float64(test[i])-mt
		dot += c * t
		cc += c * c
	}
	if cc == 0 {
		return math.Inf(-1)
	}
	alpha := dot / cc
	var target, noise float64
	for i := 0; i < n; i++ {
		c, t := float64(clean[i])-mc, float64(test[i])-mt
		s := alpha * c
		target += s * s
		noise += (t - s) * (t - s)
	}
	if noise == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(target/noise)
}

// filterValue escapes s as an option value inside an ffmpeg filter graph
// (as package media does for its own graphs).
func filterValue(s string) string {
	var opt strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '\'', ':', '=', ',', ';', '[', ']':
			opt.WriteByte('\\')
		}
		opt.WriteRune(r)
	}
	return "'" + strings.ReplaceAll(opt.String(), "'", `'\''`) + "'"
}
