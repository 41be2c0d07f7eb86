package api

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
)

// getMedia serves an output video through the service's own domain. The
// signed token is the only credential; Range requests let players seek.
func (s *Server) getMedia(c *gin.Context) {
	info, err := s.jobs.Media(c.Request.Context(), c.Param("token"))
	if err != nil {
		s.fail(c, err)
		return
	}
	start, length, partial, ok := parseRange(c.GetHeader("Range"), info.Size)
	if !ok {
		c.Header("Content-Range", fmt.Sprintf("bytes */%d", info.Size))
		s.fail(c, problem.New(problem.RangeNotSatisfiable, nil))
		return
	}
	h := c.Writer.Header()
	h.Set("Accept-Ranges", "bytes")
	h.Set("Content-Type", "video/mp4")
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	h.Set("Cache-Control", "private, max-age=3600")
	if info.ETag != "" {
		h.Set("ETag", `"`+strings.Trim(info.ETag, `"`)+`"`)
	}
	status := http.StatusOK
	if partial {
		status = http.StatusPartialContent
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, info.Size))
	}
	if c.Request.Method == http.MethodHead || length == 0 {
		c.Status(status)
		return
	}
	body, err := s.jobs.OpenMedia(c.Request.Context(), info, start, length)
	if err != nil {
		s.fail(c, err)
		return
	}
	defer body.Close()
	c.Status(status)
	// Large buffers: fewer, bigger writes keep the link near the store's speed.
	if _, err := io.CopyBuffer(c.Writer, body, make([]byte, 1<<20)); err != nil {
		s.entry(c).WithError(err).Debug("media copy ended early")
	}
}

// parseRange reads a single "bytes=" range. A malformed header or several
// ranges are answered with the whole object, as RFC 9110 allows; ok is false
// only for a well-formed range that lies outside the object.
func parseRange(header string, size int64) (start, length int64, partial, ok bool) {
	whole := func() (int64, int64, bool, bool) { return 0, size, false, true }
	if header == "" || !strings.HasPrefix(header, "bytes=") || strings.Contains(header, ",") {
		return whole()
	}
	first, last, found := strings.Cut(strings.TrimPrefix(header, "bytes="), "-")
	if !found {
		return whole()
	}
	if first == "" { // suffix: the last N bytes
		n, err := strconv.ParseInt(last, 10, 64)
		switch {
		case err != nil || n < 0:
			return whole()
		case n == 0 || size == 0:
			return 0, 0, false, false
		}
		n = min(n, size)
		return size - n, n, true, true
	}
	a, err := strconv.ParseInt(first, 10, 64)
	if err != nil || a < 0 {
		return whole()
	}
	b := size - 1
	if last != "" {
		if b, err = strconv.ParseInt(last, 10, 64); err != nil || b < a {
			return whole()
		}
		b = min(b, size-1)
	}
	if a >= size {
		return 0, 0, false, false
	}
	return a, b - a + 1, true, true
}
