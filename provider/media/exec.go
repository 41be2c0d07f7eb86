package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// stderrTailBytes bounds how much of a failing command's stderr ends up in
// the returned error: enough to diagnose, small enough to log.
const stderrTailBytes = 2048

// tailBuffer keeps only the last max bytes written to it, so a chatty
// ffmpeg cannot grow memory without bound.
type tailBuffer struct {
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

func (b *tailBuffer) String() string { return strings.TrimSpace(string(b.buf)) }

// CommandError is returned when an external tool exits unsuccessfully.
// Stderr holds at most the last 2 KB the tool printed.
type CommandError struct {
	Tool   string
	Err    error
	Stderr string
}

func (e *CommandError) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("%s: %v", e.Tool, e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", e.Tool, e.Err, e.Stderr)
}

func (e *CommandError) Unwrap() error { return e.Err }

// run executes name with args, returning stdout. stdout, when non-nil,
// receives the output as it is produced instead.
func run(ctx context.Context, name string, args []string, stdout io.Writer) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	if stdout != nil {
		cmd.Stdout = stdout
	} else {
		cmd.Stdout = &out
	}
	stderr := &tailBuffer{max: stderrTailBytes}
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = errors.Join(ctxErr, err)
		}
		return nil, &CommandError{Tool: name, Err: err, Stderr: stderr.String()}
	}
	return out.Bytes(), nil
}

// filterValue quotes s as an option value inside an ffmpeg filter graph
// (for example a file name in ass=... or a text in flite=...). The graph is
// unescaped twice: once when the graph is split into filters and once when
// the filter's options are parsed, so s is escaped for the option level and
// then single-quoted for the graph level.
func filterValue(s string) string {
	var opt strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '\'', ':', '=', ',', ';', '[', ']':
			opt.WriteByte('\\')
		}
		opt.WriteRune(r)
	}
	// Inside single quotes nothing is special except the closing quote, which
	// has to leave the quotes, be escaped, and reopen them.
	return "'" + strings.ReplaceAll(opt.String(), "'", `'\''`) + "'"
}
