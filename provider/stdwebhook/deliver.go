package stdwebhook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DeliveryTimeout bounds one attempt, connection to last byte read, so a slow endpoint
// cannot hold a delivery worker.
const DeliveryTimeout = 15 * time.Second

// maxAnswerBytes is how much of an endpoint's answer is read: enough to let the connection
// be reused for a typical short answer, and nothing is kept.
const maxAnswerBytes = 4 << 10

// Attempt is what one delivery attempt is recorded as.
type Attempt struct {
	// StatusCode is the endpoint's HTTP status, 0 when no answer came.
	StatusCode int
	// Latency runs from sending the request to reading the answer.
	Latency time.Duration
	// Err says why no answer came (connection refused, timeout, guard refusal); empty otherwise.
	Err string
}

// OK reports whether the endpoint accepted the event: any 2xx.
func (a Attempt) OK() bool {
	return a.StatusCode >= 200 && a.StatusCode < 300
}

// Deliver POSTs body with the headers h to url once, within DeliveryTimeout. The client is
// the caller's so that its dialer can refuse private addresses on every attempt; it should
// also refuse redirects, which then count as a failed (non-2xx) attempt.
func Deliver(ctx context.Context, client *http.Client, url string, h http.Header, body []byte) Attempt {
	ctx, cancel := context.WithTimeout(ctx, DeliveryTimeout)
	defer cancel()

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Attempt{Err: fmt.Sprintf("build request: %v", err)}
	}
	req.Header = h.Clone()

	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return Attempt{Latency: time.Since(start), Err: err.Error()}
	}
	defer resp.Body.Close()
	// The answer's content means nothing to the sender; a read error after the status
	// arrived does not change the outcome.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswerBytes))
	return Attempt{StatusCode: resp.StatusCode, Latency: time.Since(start)}
}
