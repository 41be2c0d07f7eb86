package media

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/devstack/mediatest"
)

// fixtures are generated once and shared by the tests in this file.
var fixtures struct {
	once                        sync.Once
	dir                         string
	av, silent, audio, coverArt string
	err                         error
}

func testFixtures(t *testing.T) (av, silent, audio, coverArt string) {
	t.Helper()
	fixtures.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		dir, err := os.MkdirTemp("", "media-test-")
		if err != nil {
			fixtures.err = err
			return
		}
		fixtures.dir = dir
		fixtures.av = filepath.Join(dir, "av.mp4")
		fixtures.silent = filepath.Join(dir, "silent.mp4")
		fixtures.audio = filepath.Join(dir, "speech.wav")
		fixtures.coverArt = filepath.Join(dir, "cover.m4a")
		steps := []func() error{
			func() error {
				return mediatest.GenerateVideo(ctx, fixtures.av, mediatest.VideoOpts{Seconds: 3, Width: 640, Height: 360, SpeechText: "Hello there, this is a test.", Noise: true})
			},
			func() error {
				return mediatest.GenerateVideo(ctx, fixtures.silent, mediatest.VideoOpts{Seconds: 2, Width: 320, Height: 240})
			},
			func() error { return mediatest.GenerateSpeech(ctx, "Audio only.", fixtures.audio) },
			func() error {
				_, err := run(ctx, "ffmpeg", ffmpegArgs("-i", fixtures.audio, "-f", "lavfi", "-i", "color=c=red:s=64x64:d=1",
					"-map", "0:a", "-map", "1:v", "-frames:v", "1", "-c:a", "aac", "-c:v", "png", "-disposition:v", "attached_pic", fixtures.coverArt), nil)
				return err
			},
		}
		for _, step := range steps {
			if fixtures.err = step(); fixtures.err != nil {
				return
			}
		}
	})
	if fixtures.err != nil {
		t.Fatal(fixtures.err)
	}
	return fixtures.av, fixtures.silent, fixtures.audio, fixtures.coverArt
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtures.dir != "" {
		os.RemoveAll(fixtures.dir)
	}
	os.Exit(code)
}

// ProbeWAV reads the 16-bit PCM WAV files ffmpeg writes, at any rate and
// channel count, as ffprobe does, from their first bytes; it leaves every
// other file to Probe, as it must a WAV file whose samples start past the
// bytes it was given.
func TestProbeWAVAgreesWithProbe(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range []struct {
		name, codec string
		rate, ch    int
		native      bool
	}{
		{"16k-mono.wav", "pcm_s16le", 16000, 1, true},
		{"44k-stereo.wav", "pcm_s16le", 44100, 2, true},
		{"8k-mono.wav", "pcm_s16le", 8000, 1, true},
		{"float.wav", "pcm_f32le", 16000, 1, false},
		{"24-bit.wav", "pcm_s24le", 48000, 2, false},
		{"speech.mp3", "libmp3lame", 16000, 1, false},
	} {
		path := filepath.Join(dir, c.name)
		if _, err := run(ctx, "ffmpeg", ffmpegArgs("-f", "lavfi", "-i", "sine=frequency=440:duration=2.5",
			"-ar", strconv.Itoa(c.rate), "-ac", strconv.Itoa(c.ch), "-c:a", c.codec, path), nil); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, native := ProbeWAV(data[:min(len(data), 4096)], int64(len(data)))
		if native != c.native {
			t.Fatalf("%s: read natively %v, want %v", c.name, native, c.native)
		}
		if !native {
			continue
		}
		want, err := NewTool().Probe(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.DurationSec-want.DurationSec) > 0.001 {
			t.Errorf("%s: %v s, ffprobe %v s", c.name, got.DurationSec, want.DurationSec)
		}
		got.DurationSec = want.DurationSec
		if got != want {
			t.Errorf("%s: %+v, ffprobe %+v", c.name, got, want)
		}
		if _, native := ProbeWAV(data[:20], int64(len(data))); native {
			t.Errorf("%s: read natively from 20 bytes", c.name)
		}
	}
}

func TestProbe(t *testing.T) {
	av, silent, audio, coverArt := testFixtures(t)
	garbage := filepath.Join(t.TempDir(), "garbage.mp4")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a video ", 500)), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty.wav")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		want    Info
		wantErr error
	}{
		{"video and audio", av, Info{DurationSec: 3, HasAudio: true, HasVideo: true, Width: 640, Height: 360, VideoCodec: "h264", AudioCodec: "aac"}, nil},
		{"video without audio", silent, Info{DurationSec: 2, HasVideo: true, Width: 320, Height: 240, VideoCodec: "h264"}, nil},
		{"audio only", audio, Info{HasAudio: true, AudioCodec: "pcm_s16le"}, nil},
		{"cover art is not video", coverArt, Info{HasAudio: true, AudioCodec: "aac"}, nil},
		{"garbage", garbage, Info{}, ErrUnreadable},
		{"empty file", empty, Info{}, ErrUnreadable},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewTool().Probe(ctx, tc.path)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.DurationSec <= 0 {
				t.Errorf("DurationSec = %v", got.DurationSec)
			}
			if tc.want.DurationSec > 0 && math.Abs(got.DurationSec-tc.want.DurationSec) > 0.1 {
				t.Errorf("DurationSec = %v, want %v", got.DurationSec, tc.want.DurationSec)
			}
			got.DurationSec, tc.want.DurationSec = 0, 0
			if got != tc.want {
				t.Errorf("Probe = %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := NewTool().Probe(ctx, filepath.Join(t.TempDir(), "missing.mp4")); err == nil || errors.Is(err, ErrUnreadable) {
		t.Errorf("missing file: err = %v, want a not-exist error", err)
	}
}

// A Tool's Threads bound the filters, each input's decoder and the
// output's encoders, every ffmpeg run.
func TestThreadsBoundEveryRun(t *testing.T) {
	dir := t.TempDir()
	argsPath := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "ffmpeg")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsPath + "\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tool := Tool{FFmpeg: fake, Threads: 3}
	if err := tool.ExtractAudio(context.Background(), "in.mp4", "out.wav"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(argsPath)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(strings.Fields(string(b)), " ")
	want := "-nostdin -hide_banner -y -v error -filter_threads 3 " +
		"-threads 3 -i in.mp4 -map 0:a:0 -vn -ac 1 -ar 16000 -c:a pcm_s16le -f wav -threads 3 out.wav"
	if got != want {
		t.Errorf("ffmpeg ran with\n%s\nwant\n%s", got, want)
	}
}

func TestExtractAudio(t *testing.T) {
	av, silent, _, _ := testFixtures(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "a.wav")
	if err := NewTool().ExtractAudio(ctx, av, out); err != nil {
		t.Fatal(err)
	}
	samples, rate, err := mediatest.ReadWAVMono(out)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	channels := int(b[22]) | int(b[23])<<8
	bits := int(b[34]) | int(b[35])<<8
	if rate != 16000 || channels != 1 || bits != 16 {
		t.Errorf("got %d Hz, %d channels, %d bits; want 16000 Hz mono 16-bit", rate, channels, bits)
	}
	if d := float64(len(samples)) / float64(rate); math.Abs(d-3) > 0.1 {
		t.Errorf("duration %.3f s, want 3", d)
	}
	err = NewTool().ExtractAudio(ctx, silent, filepath.Join(t.TempDir(), "b.wav"))
	var cmdErr *CommandError
	if !errors.As(err, &cmdErr) || cmdErr.Stderr == "" {
		t.Errorf("video without audio: err = %v, want a CommandError with stderr", err)
	}
}

func TestFilterValue(t *testing.T) {
	tests := map[string]string{
		"plain.ass":          `'plain.ass'`,
		`C:\subs\a.ass`:      `'C\:\\subs\\a.ass'`,
		"it's, [x]; a=b.ass": `'it\'\''s\, \[x\]\; a\=b.ass'`,
	}
	for in, want := range tests {
		if got := filterValue(in); got != want {
			t.Errorf("filterValue(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestFontAvailable(t *testing.T) {
	ctx := context.Background()
	for family, want := range map[string]bool{"DejaVu Sans": true, "dejavu sans": true, "DejaVu": false, "No Such Font 123": false, "": false} {
		if got := FontAvailable(ctx, family); got != want {
			t.Errorf("FontAvailable(%q) = %v, want %v", family, got, want)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 5}
	b.Write([]byte("abc"))
	b.Write([]byte("defg"))
	if b.String() != "cdefg" {
		t.Errorf("got %q", b.String())
	}
	b.Write([]byte("0123456789"))
	if b.String() != "56789" {
		t.Errorf("got %q", b.String())
	}
}

func TestGenerateVideoDuration(t *testing.T) {
	av, _, _, _ := testFixtures(t)
	info, err := NewTool().Probe(context.Background(), av)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(info.DurationSec-3) > 0.1 {
		t.Errorf("duration %v", info.DurationSec)
	}
}
