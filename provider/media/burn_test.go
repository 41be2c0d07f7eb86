package media

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"parley/rules/subtitles"
)

// grayFrame decodes the frame at sec as 8-bit luma, row by row.
func grayFrame(t *testing.T, path string, sec float64, w, h int) []byte {
	t.Helper()
	out, err := run(context.Background(), "ffmpeg", ffmpegArgs("-ss", formatSec(sec), "-i", path,
		"-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "-"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != w*h {
		t.Fatalf("frame of %d bytes, want %d", len(out), w*h)
	}
	return out
}

func formatSec(s float64) string { return time.Duration(s * float64(time.Second)).String() }

// bandDiff is the mean absolute luma difference between a and b in rows
// [from, to) as fractions of the height.
func bandDiff(a, b []byte, w, h int, from, to float64) float64 {
	var sum, n float64
	for y := int(from * float64(h)); y < int(to*float64(h)); y++ {
		for x := 0; x < w; x++ {
			sum += math.Abs(float64(a[y*w+x]) - float64(b[y*w+x]))
			n++
		}
	}
	return sum / n
}

func streamCounts(t *testing.T, path string) (video, audio int) {
	t.Helper()
	out, err := run(context.Background(), "ffprobe", []string{"-v", "error", "-print_format", "json", "-show_entries", "stream=codec_type", path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Streams []struct {
			CodecType string `json:"codec_type"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Streams {
		switch s.CodecType {
		case "video":
			video++
		case "audio":
			audio++
		}
	}
	return video, audio
}

func TestBurn(t *testing.T) {
	av, _, _, _ := testFixtures(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// One thread, as a worker runs them: the options must not change the
	// output.
	tool := NewTool()
	tool.Threads = 1
	src, err := tool.Probe(ctx, av)
	if err != nil {
		t.Fatal(err)
	}
	w, h := src.Width, src.Height
	const at = 1.5 // inside the cue
	srcFrame := grayFrame(t, av, at, w, h)

	dir := t.TempDir()
	cleaned := filepath.Join(dir, "cleaned.wav")
	if err := (FFmpegCleaner{Tool: tool}).Clean(ctx, av, cleaned); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		text     string
		position string
		audio    string
		// caption band and a band that must stay as it was, as fractions of the height
		band, quiet [2]float64
	}{
		{"bottom", "Burned captions work", "bottom", "", [2]float64{0.75, 1}, [2]float64{0, 0.5}},
		{"top", "Burned captions work", "top", "", [2]float64{0, 0.25}, [2]float64{0.5, 1}},
		{"hebrew with cleaned audio", "שלום עולם, זה מבחן", "bottom", cleaned, [2]float64{0.75, 1}, [2]float64{0, 0.5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			style, err := subtitles.ParseStyle(`{"position":"` + tc.position + `"}`)
			if err != nil {
				t.Fatal(err)
			}
			cues := []subtitles.Cue{{Index: 1, Start: 0.5, End: 2.5, Text: tc.text}}
			// An awkward file name checks the filter-graph escaping.
			assPath := filepath.Join(t.TempDir(), "it's, [a]; b=c.ass")
			if err := os.WriteFile(assPath, []byte(subtitles.RenderASS(cues, style, w, h)), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out.mp4")
			var last float64
			calls := 0
			start := time.Now()
			err = tool.Burn(ctx, BurnInput{Video: av, ASS: assPath, Audio: tc.audio, Out: out, Progress: func(s, total float64) {
				if total != src.DurationSec {
					t.Errorf("progress total %v, want the source's %v", total, src.DurationSec)
				}
				if s < last {
					t.Errorf("progress went back: %v after %v", s, last)
				}
				last = s
				calls++
			}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("burned %.1f s of %dx%d in %v (%d progress reports, last %.2f s)", src.DurationSec, w, h, time.Since(start).Round(time.Millisecond), calls, last)
			if calls == 0 || last != src.DurationSec {
				t.Errorf("progress: %d reports, last %.2f s, want about %.2f", calls, last, src.DurationSec)
			}
			got, err := tool.Probe(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			if got.VideoCodec != "h264" || got.AudioCodec != "aac" || got.Width != w || got.Height != h {
				t.Errorf("output %+v", got)
			}
			if math.Abs(got.DurationSec-src.DurationSec) > 0.1 {
				t.Errorf("duration %.3f s, source %.3f s", got.DurationSec, src.DurationSec)
			}
			if v, a := streamCounts(t, out); v != 1 || a != 1 {
				t.Errorf("%d video and %d audio streams, want 1 and 1", v, a)
			}
			frame := grayFrame(t, out, at, w, h)
			inBand := bandDiff(srcFrame, frame, w, h, tc.band[0], tc.band[1])
			outside := bandDiff(srcFrame, frame, w, h, tc.quiet[0], tc.quiet[1])
			t.Logf("mean |Δluma|: caption band %.2f, elsewhere %.2f", inBand, outside)
			if inBand < 3 || inBand < 4*outside {
				t.Errorf("caption not visible: band diff %.2f, elsewhere %.2f", inBand, outside)
			}
			after := grayFrame(t, out, 2.8, w, h) // after the cue: nothing burned
			if d := bandDiff(grayFrame(t, av, 2.8, w, h), after, w, h, tc.band[0], tc.band[1]); d > 2 {
				t.Errorf("caption band differs by %.2f after the cue ended", d)
			}
		})
	}
}

func TestBurnVideoWithoutAudio(t *testing.T) {
	_, silent, _, _ := testFixtures(t)
	ctx := context.Background()
	dir := t.TempDir()
	assPath := filepath.Join(dir, "s.ass")
	cues := []subtitles.Cue{{Index: 1, Start: 0.2, End: 1.5, Text: "No sound here"}}
	if err := os.WriteFile(assPath, []byte(subtitles.RenderASS(cues, subtitles.Style{}, 320, 240)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.mp4")
	if err := NewTool().Burn(ctx, BurnInput{Video: silent, ASS: assPath, Out: out}); err != nil {
		t.Fatal(err)
	}
	if v, a := streamCounts(t, out); v != 1 || a != 0 {
		t.Errorf("%d video and %d audio streams, want 1 and 0", v, a)
	}
}
