package netguard

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func hostOf(u *url.URL) string { return strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")) }

func hasDomainSuffix(host, domain string) bool { return strings.HasSuffix(host, "."+domain) }

func containsStatus(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		if s == "status" && i+1 < len(segs) && segs[i+1] != "" {
			return true
		}
	}
	return false
}

// ytdlpPath finds the yt-dlp executable.
func (g Guard) ytdlpPath() (string, error) {
	bin := g.YTDLP
	if bin == "" {
		bin = "yt-dlp"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", &Error{Kind: ErrYTDLPMissing, Reason: "yt-dlp is not installed on this server", Err: err}
	}
	return path, nil
}

// downloadVideo runs yt-dlp into a private temporary directory and copies the
// result to w. yt-dlp makes its own connections (to the site and its CDNs),
// which the dialer checks cannot cover; that is why only the fixed list of
// public sites in IsVideoSharing is handed to it.
func (g Guard) downloadVideo(ctx context.Context, u *url.URL, w io.Writer) (int64, error) {
	path, err := g.ytdlpPath()
	if err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "netguard-ytdlp-*")
	if err != nil {
		return 0, fmt.Errorf("netguard: temp dir: %w", err)
	}
	defer os.RemoveAll(dir)

	max := g.maxBytes()
	cmd := exec.CommandContext(ctx, path,
		"--ignore-config", "--no-playlist", "--no-progress", "--no-part", "--no-mtime",
		"--no-cache-dir", "-f", "bestaudio/best",
		"--max-filesize", strconv.FormatInt(max, 10),
		"-o", filepath.Join(dir, "media.%(ext)s"),
		"--", u.String())
	cmd.Dir = dir
	// yt-dlp may start ffmpeg: kill the whole process group on cancel.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	// yt-dlp reports some outcomes (such as skipping an oversize file) on
	// stdout, so keep the tail of both.
	stderr := &tailWriter{max: 4 << 10}
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return 0, &Error{Kind: ErrDownload, Reason: "timed out or cancelled", Err: ctx.Err()}
		}
		return 0, &Error{Kind: ErrDownload, Reason: "could not fetch the video",
			Err: fmt.Errorf("yt-dlp: %w: %s", err, strings.TrimSpace(stderr.String()))}
	}

	file, size := largestFile(dir)
	if file == "" {
		if strings.Contains(stderr.String(), "max-filesize") || strings.Contains(stderr.String(), "larger than max") {
			return 0, tooLarge(max)
		}
		return 0, &Error{Kind: ErrDownload, Reason: "could not fetch the video",
			Err: fmt.Errorf("yt-dlp wrote no file: %s", strings.TrimSpace(stderr.String()))}
	}
	if size > max {
		return 0, tooLarge(max)
	}
	f, err := os.Open(file)
	if err != nil {
		return 0, fmt.Errorf("netguard: %w", err)
	}
	defer f.Close()
	return copyCapped(ctx, w, f, max)
}

func largestFile(dir string) (string, int64) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", 0
	}
	var best string
	var size int64 = -1
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".part") || strings.HasSuffix(e.Name(), ".ytdl") {
			continue
		}
		info, err := e.Info()
		if err == nil && info.Size() > size {
			best, size = filepath.Join(dir, e.Name()), info.Size()
		}
	}
	return best, size
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return string(t.buf) }
