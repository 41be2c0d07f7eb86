//go:build integration

package e2e

import (
	"bytes"
	"context"
	be "encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"testing"
	"time"

	"parley/devstack/mediatest"
	"parley/devstack/testenv"
	"parley/provider/media"
	"parley/rules/billing"
)

// ffmpeg runs ffmpeg quietly, failing the test on error.
func ffmpeg(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("ffmpeg", append([]string{"-hide_banner", "-loglevel", "error", "-y"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
	}
}

// forgedMP3 is a recording whose Info header claims 40 frames (1.44 s at
// 16 kHz): ffprobe takes the header's frame count for the length, the
// decoder plays every frame.
func forgedMP3(t *testing.T, speech string) string {
	return fixture(t, "forged.mp3", func(path string) error {
		honest := path + ".honest.mp3"
		ffmpeg(t, "-i", speech, "-ac", "1", "-ar", "16000", "-b:a", "32k", "-id3v2_version", "0", honest)
		data, err := os.ReadFile(honest)
		if err != nil {
			return err
		}
		// "Info", 4 bytes of flags (bit 0: the frame count follows), the count.
		i := bytes.Index(data, []byte("Info"))
		if i < 0 || data[i+7]&1 == 0 {
			return fmt.Errorf("no Info header with a frame count in %s", honest)
		}
		be.BigEndian.PutUint32(data[i+8:], 40)
		return os.WriteFile(path, data, 0o644)
	})
}

// forgedMKV is a video whose Matroska segment claims to last one second.
func forgedMKV(t *testing.T, video string) string {
	return fixture(t, "forged.mkv", func(path string) error {
		honest := path + ".honest.mkv"
		ffmpeg(t, "-i", video, "-c", "copy", honest)
		data, err := os.ReadFile(honest)
		if err != nil {
			return err
		}
		// Segment Info's Duration: element 0x4489, an 8-byte float of
		// TimecodeScale units (1 ms).
		i := bytes.Index(data, []byte{0x44, 0x89, 0x88})
		if i < 0 {
			return fmt.Errorf("no 8-byte Duration element in %s", honest)
		}
		be.BigEndian.PutUint64(data[i+3:], math.Float64bits(1000))
		return os.WriteFile(path, data, 0o644)
	})
}

// claimed is what the container says, as admission reads it.
func claimed(t *testing.T, path string) float64 {
	t.Helper()
	info, err := media.NewTool().Probe(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return info.DurationSec
}

// A container that claims less than it holds is billed, reserved and
// captioned for what its audio decoded to; a balance that covers the claim
// but not the truth fails the job with nothing charged.
func TestForgedDurationIsBilledByDecodedAudio(t *testing.T) {
	p := startPlatform(t, options{})
	speech := speechFixture(t, "forged-speech.wav",
		"The quarterly report shows steady growth in every region. Our team will review the numbers again next week and share a summary with everyone.")
	mp3 := forgedMP3(t, speech)
	if c := claimed(t, mp3); c > 1.5 {
		t.Fatalf("the forged MP3 claims %.1f s: the forgery did not take", c)
	}

	t.Run("MP3 is charged for every decoded second", func(t *testing.T) {
		_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
		var accepted struct{ ID int64 }
		p.upload("/transcribe", key.Secret, mp3, []string{"language", "en"}).want(t, 202, "").decode(t, &accepted)
		j := p.waitFor(jobPath("transcribe", accepted.ID), key.Secret, 3*time.Minute, final)
		if j.Status != "done" || j.AudioDurationSec == nil || *j.AudioDurationSec < 6 {
			t.Fatalf("job %+v: want done with the decoded duration", j)
		}
		want := billing.ForDuration(*j.AudioDurationSec, 6000)
		charges := p.charges(j.ID)
		if len(charges) != 1 || charges[0].AmountMicros != -want {
			t.Fatalf("charges %+v, want one of %d micro-dollars", charges, want)
		}
		if last := j.Words[len(j.Words)-1]; last.End > *j.AudioDurationSec+0.05 {
			t.Errorf("a word ends at %.2f s, after the billed %.2f s", last.End, *j.AudioDurationSec)
		}
	})

	t.Run("a balance for the claim but not the truth fails the job", func(t *testing.T) {
		// 500 micro-dollars cover the claimed 1.5 s (150) but not ~10 s.
		_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 500})
		var accepted struct{ ID int64 }
		p.upload("/transcribe", key.Secret, mp3, []string{"language", "en"}).want(t, 202, "").decode(t, &accepted)
		j := p.waitFor(jobPath("transcribe", accepted.ID), key.Secret, 3*time.Minute, final)
		if j.Status != "failed" || j.ErrorCode == nil || *j.ErrorCode != "INSUFFICIENT_BALANCE" {
			t.Fatalf("job %+v: want failed with INSUFFICIENT_BALANCE", j)
		}
		if charges := p.charges(j.ID); len(charges) != 0 {
			t.Fatalf("charged %+v for a refused job", charges)
		}
	})

	t.Run("MKV subtitles are captioned and billed to the end", func(t *testing.T) {
		video := videoFixture(t, "forged-source.mp4", mediatest.VideoOpts{Seconds: 8, SpeechText: "Captions must run until the very end of this video."})
		mkv := forgedMKV(t, video)
		if c := claimed(t, mkv); c > 1.5 {
			t.Fatalf("the forged MKV claims %.1f s: the forgery did not take", c)
		}
		_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
		var accepted struct{ ID int64 }
		p.upload("/subtitles", key.Secret, mkv, []string{"language", "en"}).want(t, 202, "").decode(t, &accepted)
		j := p.waitFor(jobPath("subtitles", accepted.ID), key.Secret, 4*time.Minute, final)
		if j.Status != "done" || j.VideoDurationSec == nil || *j.VideoDurationSec < 7 {
			t.Fatalf("job %+v: want done with the decoded duration", j)
		}
		if want := billing.ForDuration(*j.VideoDurationSec, 20000).CostString(); j.BurnCostUSD != want {
			t.Errorf("burn cost %s, want %s", j.BurnCostUSD, want)
		}
		r := p.do("GET", fmt.Sprintf("/subtitles/%d/srt", j.ID), key.Secret, nil)
		if r.status != 200 || len(r.body) == 0 {
			t.Fatalf("srt: %d %s", r.status, r.body)
		}
	})
}

// vbrMP3 is an honest VBR recording with no Xing/Info header, so nothing in
// the file states its length: ffprobe estimates it from the bitrate near the
// start. A loud second of noise there, then speech and a long quiet tail,
// make that estimate far too short, as ordinary recordings can.
func vbrMP3(t *testing.T, speech string) (mp3, wav string) {
	wav = fixture(t, "vbr-source.wav", func(path string) error {
		ffmpeg(t, "-f", "lavfi", "-i", "anoisesrc=d=1:a=0.8:r=16000", "-i", speech, "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono:d=8",
			"-filter_complex", "[0][1][2]concat=n=3:v=0:a=1", "-ac", "1", "-ar", "16000", path)
		return nil
	})
	mp3 = fixture(t, "vbr-no-header.mp3", func(path string) error {
		ffmpeg(t, "-i", wav, "-c:a", "libmp3lame", "-q:a", "5", "-write_xing", "0", "-id3v2_version", "0", path)
		if data, err := os.ReadFile(path); err != nil || bytes.Contains(data, []byte("Xing")) || bytes.Contains(data, []byte("Info")) {
			return fmt.Errorf("%s has a length header (%v)", path, err)
		}
		return nil
	})
	return mp3, wav
}

// An honest VBR MP3 without a length header is charged for what it decodes
// to, not for the estimate a prober makes of its length.
func TestVBRWithoutLengthHeaderIsBilledByDecodedAudio(t *testing.T) {
	p := startPlatform(t, options{})
	mp3, wav := vbrMP3(t, speechFixture(t, "known.wav", knownText))
	truth, estimate := claimed(t, wav), claimed(t, mp3)
	if math.Abs(estimate-truth) < 0.2*truth {
		t.Fatalf("ffprobe estimates %.1f s of %.1f s: the fixture no longer tests a wrong estimate", estimate, truth)
	}
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	var accepted struct{ ID int64 }
	p.upload("/transcribe", key.Secret, mp3, []string{"language", "en"}).want(t, 202, "").decode(t, &accepted)
	j := p.waitFor(jobPath("transcribe", accepted.ID), key.Secret, 3*time.Minute, final)
	if j.Status != "done" || j.AudioDurationSec == nil {
		t.Fatalf("job %+v: want done with the decoded duration", j)
	}
	// Without a LAME header the decoder cannot trim the encoder's delay and
	// padding: up to about three 36 ms frames more than the recording.
	if d := *j.AudioDurationSec; math.Abs(d-truth) > 0.2 {
		t.Fatalf("decoded %.2f s of a %.2f s recording (the estimate was %.2f s)", d, truth, estimate)
	}
	t.Logf("recording %.2f s, estimated %.2f s, decoded %.2f s", truth, estimate, *j.AudioDurationSec)
	want := billing.ForDuration(*j.AudioDurationSec, 6000)
	if charges := p.charges(j.ID); len(charges) != 1 || charges[0].AmountMicros != -want {
		t.Fatalf("charges %+v, want one of %d micro-dollars for %.2f s", charges, want, *j.AudioDurationSec)
	}
}
