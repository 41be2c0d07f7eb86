package media

import (
	"slices"
	"strings"
	"testing"
)

// ffmpeg's -progress blocks as it prints them: N/A before the first frame,
// a negative time from an edit list, a repeated time, a last frame that
// starts before the end, then the end.
const progressStream = `frame=0
out_time_us=N/A
out_time=N/A
progress=continue
frame=1
out_time_us=-23220
progress=continue
frame=30
out_time_us=1000000
out_time_ms=1000000
progress=continue
frame=30
out_time_us=1000000
progress=continue
frame=75
out_time_us=2500000
progress=continue
frame=119
out_time_us=3966667
progress=end
`

func TestReadProgress(t *testing.T) {
	type call struct{ done, total float64 }
	var got []call
	readProgress(strings.NewReader(progressStream), 4, func(done, total float64) { got = append(got, call{done, total}) })
	want := []call{{1, 4}, {1, 4}, {2.5, 4}, {3.966667, 4}, {4, 4}}
	if !slices.Equal(got, want) {
		t.Fatalf("reports %v, want %v", got, want)
	}
}

// A time past the duration (the output's last packet can end after the
// source's stated duration) is held to it; a time going back is not
// reported.
func TestReadProgressHeldToTotal(t *testing.T) {
	var got []float64
	stream := "out_time_us=3000000\nout_time_us=2000000\nout_time_us=5000000\nprogress=continue\n"
	readProgress(strings.NewReader(stream), 4, func(done, _ float64) { got = append(got, done) })
	if want := []float64{3, 4}; !slices.Equal(got, want) {
		t.Fatalf("reports %v, want %v", got, want)
	}
}

// Without a callback the stream is still read to its end.
func TestReadProgressDrains(t *testing.T) {
	r := strings.NewReader(progressStream)
	readProgress(r, 4, nil)
	if r.Len() != 0 {
		t.Fatalf("%d bytes left unread", r.Len())
	}
}
