// Package media wraps ffmpeg and ffprobe: probing uploads, extracting and
// cleaning audio, and burning subtitles into video.
package media

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

// ErrUnreadable means the input is not media ffprobe can decode, has no
// streams, or has no usable duration.
var ErrUnreadable = errors.New("media: unreadable input")

// Tool names the ffmpeg and ffprobe binaries to run.
type Tool struct {
	FFmpeg  string
	FFprobe string
	// Threads bounds the threads of each ffmpeg run's decoders, filters and
	// encoders; 0 leaves ffmpeg's default (about one per core). A worker
	// running one ffmpeg per core sets 1, so that running them side by side
	// never oversubscribes the CPU.
	Threads int
}

// NewTool returns a Tool that runs ffmpeg and ffprobe from PATH.
func NewTool() Tool { return Tool{FFmpeg: "ffmpeg", FFprobe: "ffprobe"} }

func (t Tool) ffmpeg() string {
	if t.FFmpeg == "" {
		return "ffmpeg"
	}
	return t.FFmpeg
}

func (t Tool) ffprobe() string {
	if t.FFprobe == "" {
		return "ffprobe"
	}
	return t.FFprobe
}

// ffmpegArgs prefixes the options every ffmpeg run here needs: never read
// stdin (it would hang a worker), overwrite the output the caller named, and
// print only errors.
func ffmpegArgs(args ...string) []string {
	return append([]string{"-nostdin", "-hide_banner", "-y", "-v", "error"}, args...)
}

// ffmpegRun runs ffmpeg with args, whose last is the output, held to
// t.Threads: the filter graph (-filter_threads), the decoder of each input
// (-threads before its -i) and the encoders of the output (-threads before
// it).
func (t Tool) ffmpegRun(ctx context.Context, args []string, stdout io.Writer) error {
	if t.Threads > 0 {
		n := strconv.Itoa(t.Threads)
		bounded := []string{"-filter_threads", n}
		for i, a := range args {
			if a == "-i" || i == len(args)-1 {
				bounded = append(bounded, "-threads", n)
			}
			bounded = append(bounded, a)
		}
		args = bounded
	}
	_, err := run(ctx, t.ffmpeg(), ffmpegArgs(args...), stdout)
	return err
}

// Info describes a media file.
type Info struct {
	DurationSec float64
	HasAudio    bool
	HasVideo    bool
	Width       int
	Height      int
	VideoCodec  string
	AudioCodec  string
}

type probeOutput struct {
	Streams []struct {
		Index       int    `json:"index"`
		CodecType   string `json:"codec_type"`
		CodecName   string `json:"codec_name"`
		Duration    string `json:"duration"`
		Width       int    `json:"width"`
		Height      int    `json:"height"`
		Disposition struct {
			AttachedPic int `json:"attached_pic"`
		} `json:"disposition"`
	} `json:"streams"`
	Format struct {
		Duration string `json:"duration"`
	} `json:"format"`
}

// Probe reports the duration and streams of the media at path, a local file
// or an http(s) URL (ffprobe then reads only what it needs, with ranged
// requests). Cover art in audio files is not counted as video.
func (t Tool) Probe(ctx context.Context, path string) (Info, error) {
	remote := strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://")
	if !remote {
		if _, err := os.Stat(path); err != nil {
			return Info{}, fmt.Errorf("media: probe: %w", err)
		}
	}
	out, err := run(ctx, t.ffprobe(), []string{
		"-v", "error", "-rw_timeout", "30000000", "-print_format", "json",
		"-show_entries", "format=duration:stream=index,codec_type,codec_name,duration,sample_rate,channels,width,height:stream_disposition=attached_pic",
		path,
	}, nil)
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && ctx.Err() == nil {
			return Info{}, fmt.Errorf("%w: %v", ErrUnreadable, err)
		}
		return Info{}, fmt.Errorf("media: probe: %w", err)
	}
	var po probeOutput
	if err := json.Unmarshal(out, &po); err != nil {
		return Info{}, fmt.Errorf("%w: ffprobe output: %v", ErrUnreadable, err)
	}
	var info Info
	var streamDur float64
	for _, s := range po.Streams {
		switch s.CodecType {
		case "audio":
			if !info.HasAudio {
				info.HasAudio = true
				info.AudioCodec = s.CodecName
			}
		case "video":
			if s.Disposition.AttachedPic != 0 || info.HasVideo {
				continue
			}
			info.HasVideo = true
			info.VideoCodec = s.CodecName
			info.Width, info.Height = s.Width, s.Height
		default:
			continue
		}
		if d, err := strconv.ParseFloat(s.Duration, 64); err == nil && d > streamDur {
			streamDur = d
		}
	}
	if !info.HasAudio && !info.HasVideo {
		return Info{}, fmt.Errorf("%w: no audio or video stream", ErrUnreadable)
	}
	info.DurationSec = streamDur
	if d, err := strconv.ParseFloat(po.Format.Duration, 64); err == nil && d > 0 {
		info.DurationSec = d
	}
	if info.DurationSec <= 0 {
		return Info{}, fmt.Errorf("%w: no duration", ErrUnreadable)
	}
	return info, nil
}

// extractedRate is the sample rate of the audio ExtractAudio writes.
const extractedRate = 16000

// ExtractAudio writes the first audio stream of in to out as 16 kHz mono
// 16-bit WAV, the format speech engines expect.
func (t Tool) ExtractAudio(ctx context.Context, in, out string) error {
	err := t.ffmpegRun(ctx, []string{
		"-i", in, "-map", "0:a:0", "-vn",
		"-ac", "1", "-ar", strconv.Itoa(extractedRate), "-c:a", "pcm_s16le", "-f", "wav", out,
	}, nil)
	if err != nil {
		return fmt.Errorf("media: extract audio: %w", err)
	}
	return nil
}

// Cleaner reduces background noise in an audio (or video) file, writing audio
// to out.
type Cleaner interface {
	Clean(ctx context.Context, in, out string) error
}

// CleanFilter is the ffmpeg filter chain FFmpegCleaner applies to a
// recording whose noise floor is floorDB (dBFS). Chosen by
// TestCleanFilterSweep (flite speech at 48 kHz, white and pink noise):
//   - afftdn with its noise floor set from the recording's own quiet
//     moments, 3 dB above the measured floor, gains ~14 dB SI-SNR on white
//     noise and ~10 dB at 15 dB SNR, ~2 dB on pink noise, and leaves clean
//     speech untouched (its floor is then so low nothing is removed). A
//     fixed floor either misses quiet noise or eats quiet speech; afftdn's own
//     noise tracking (tn=1) gained under 0.2 dB on white noise.
//   - anlmdn=s=100, highpass and afwtdn gained nothing or hurt here.
//   - afftdn delays its output by 25 ms; atrim/apad at a fixed 48 kHz take the
//     delay out so the track stays in sync with the picture and the length is
//     unchanged.
func CleanFilter(floorDB float64) string {
	nf := math.Max(-80, math.Min(-20, floorDB+3))
	return fmt.Sprintf("aresample=48000,afftdn=nr=97:nf=%.1f,atrim=start_sample=1200,apad=pad_len=1200", nf)
}

// FFmpegCleaner cleans audio with ffmpeg's FFT denoiser, tuned per file to
// the measured noise floor. It writes a 48 kHz 16-bit WAV with the input's
// channels.
type FFmpegCleaner struct {
	Tool Tool
}

// Clean implements Cleaner.
func (c FFmpegCleaner) Clean(ctx context.Context, in, out string) error {
	floor, err := c.Tool.NoiseFloor(ctx, in)
	if err != nil {
		return err
	}
	err = c.Tool.ffmpegRun(ctx, []string{
		"-i", in, "-map", "0:a:0", "-vn",
		"-af", CleanFilter(floor), "-c:a", "pcm_s16le", "-f", "wav", out,
	}, nil)
	if err != nil {
		return fmt.Errorf("media: clean audio: %w", err)
	}
	return nil
}

// NoiseFloor estimates the background level of a recording in dBFS: the
// 10th percentile of its 50 ms window levels, which in speech falls in the
// pauses. The audio is decoded as a stream, never held whole.
func (t Tool) NoiseFloor(ctx context.Context, in string) (float64, error) {
	// Measured at the rate afftdn works at, so the floor is in its terms.
	levels := &windowLevels{size: 2400 * 2} // 50 ms of 48 kHz s16
	err := t.ffmpegRun(ctx, []string{"-i", in, "-map", "0:a:0", "-vn", "-ac", "1", "-ar", "48000", "-f", "s16le", "-"}, levels)
	if err != nil {
		return 0, fmt.Errorf("media: noise floor: %w", err)
	}
	if len(levels.dB) == 0 {
		return 0, fmt.Errorf("%w: no audio to measure", ErrUnreadable)
	}
	sort.Float64s(levels.dB)
	return levels.dB[len(levels.dB)/10], nil
}

// windowLevels turns a stream of s16le samples into the level in dBFS of
// each full window of size bytes.
type windowLevels struct {
	size    int
	pending []byte
	dB      []float64
}

func (w *windowLevels) Write(p []byte) (int, error) {
	w.pending = append(w.pending, p...)
	for len(w.pending) >= w.size {
		var power float64
		for i := 0; i < w.size; i += 2 {
			v := float64(int16(binary.LittleEndian.Uint16(w.pending[i:]))) / 32768
			power += v * v
		}
		w.dB = append(w.dB, 10*math.Log10(power/float64(w.size/2)+1e-12))
		w.pending = w.pending[w.size:]
	}
	w.pending = append([]byte(nil), w.pending...)
	return len(p), nil
}

// BurnInput says what to burn where.
type BurnInput struct {
	Video string // source video
	ASS   string // subtitles to burn, as written by subtitles.RenderASS
	// Audio optionally replaces the video's audio (e.g. a cleaned track);
	// "" keeps the video's own audio, if it has any.
	Audio string
	Out   string // mp4 to write
	// Progress, when set, is called as ffmpeg reports its progress (about
	// twice a second) with the seconds of output written so far and the
	// source's duration: done never falls and never passes total, and the
	// last call, when ffmpeg reports the end, has done == total.
	Progress func(doneSec, totalSec float64)
}

// Burn renders the ASS subtitles into the video's pixels and writes an H.264
// + AAC mp4 of the same duration.
func (t Tool) Burn(ctx context.Context, in BurnInput) error {
	src, err := t.Probe(ctx, in.Video)
	if err != nil {
		return fmt.Errorf("media: burn: %w", err)
	}
	if !src.HasVideo {
		return fmt.Errorf("media: burn: %w: no video stream", ErrUnreadable)
	}
	args := []string{"-nostats", "-progress", "pipe:1", "-i", in.Video}
	audioMap := "0:a:0?"
	if in.Audio != "" {
		args = append(args, "-i", in.Audio)
		audioMap = "1:a:0"
	}
	args = append(args,
		"-map", "0:v:0", "-map", audioMap,
		"-vf", "ass=filename="+filterValue(in.ASS),
		"-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
		"-c:a", "aac", "-b:a", "160k",
		"-movflags", "+faststart",
	)
	if in.Audio != "" {
		// A replacement track may be a little longer than the picture; cut it
		// at the source's length rather than with -shortest, which would cut
		// the video when the audio is the shorter one.
		args = append(args, "-t", strconv.FormatFloat(src.DurationSec, 'f', 3, 64))
	}
	args = append(args, "-f", "mp4", in.Out)

	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		readProgress(pr, src.DurationSec, in.Progress)
	}()
	err = t.ffmpegRun(ctx, args, pw)
	pw.Close()
	<-done
	if err != nil {
		return fmt.Errorf("media: burn: %w", err)
	}
	return nil
}

// readProgress parses ffmpeg's -progress stream: blocks of key=value lines,
// each ending with progress=continue, the last with progress=end. It
// reports out_time_us in seconds of total, held to 0..total and never
// falling (ffmpeg prints N/A or a negative time before the first frame, and
// the last frame may start a little before the end), then total at the end.
// It drains r to the end so ffmpeg never blocks.
func readProgress(r io.Reader, total float64, report func(done, total float64)) {
	sc := bufio.NewScanner(r)
	done := 0.0
	for sc.Scan() && report != nil {
		key, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		switch key {
		case "out_time_us":
			us, err := strconv.ParseInt(v, 10, 64)
			if err != nil || us < 0 {
				continue
			}
			if s := min(float64(us)/1e6, total); s >= done {
				done = s
				report(done, total)
			}
		case "progress":
			if v == "end" {
				report(total, total)
			}
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// FontAvailable reports whether fontconfig knows a font family named family
// (case-insensitive, exact match), so a burn can reject a style whose font
// would silently fall back to another.
func FontAvailable(ctx context.Context, family string) bool {
	family = strings.TrimSpace(family)
	if family == "" {
		return false
	}
	out, err := run(ctx, "fc-list", []string{"--format", "%{family}\n"}, nil)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		for _, name := range strings.Split(line, ",") {
			if strings.EqualFold(strings.TrimSpace(name), family) {
				return true
			}
		}
	}
	return false
}
