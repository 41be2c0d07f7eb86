//go:build integration

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"parley/model"
	"parley/rules/billing"
	"parley/storage"
)

// Two-way traffic on the same pairs at once: single sends, thread replies,
// batches, mark-reads and signed inbound messages (some delivered twice, as
// a carrier retries) race on one owned number and six remote numbers. No
// request is answered 5xx, every send is answered as documented, every
// inbound message is stored exactly once, and each thread's counters say
// what its rows say. Run under -race as well by scripts/test.sh.
func TestSMSTwoWayTrafficOnOneThread(t *testing.T) {
	p := startPlatform(t, options{sms: true, callbackDelay: 20 * time.Millisecond})
	a := newSMSAccount(t, p, 100*billing.MicrosPerUSD, true, true)
	ctx := context.Background()
	if err := (storage.SMS{DB: p.db}).SetQuota(ctx, a.ID, "US", 100_000); err != nil {
		t.Fatal(err)
	}
	remotes := []string{"+12025550801", "+12025550802", "+12025550803", "+12025550804", "+12025550805", "+12025550806"}
	// The first three pairs have threads before the race (replies need
	// them); the other three are created by whichever side comes first.
	threadIDs := map[string]int64{}
	for _, r := range remotes[:3] {
		var sent struct{ ThreadID int64 }
		p.sendSMS(a, "hello", recipient{Phone: r}).want(t, 200, "").decode(t, &sent)
		threadIDs[r] = sent.ThreadID
	}

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
		batches  []int64
		sids     []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	run := func(n int, f func(i int)) {
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(i)
			}()
		}
	}
	run(40, func(i int) {
		sid := fmt.Sprintf("SMrace%032d", i)
		form := url.Values{"MessageSid": {sid}, "AccountSid": {p.cfg.TwilioAccountSID}, "From": {remotes[i%len(remotes)]},
			"To": {a.From}, "Body": {fmt.Sprintf("answer %d", i)}, "NumMedia": {"0"}}
		// Every fourth one arrives twice, as a carrier's retry would.
		posts := 1
		if i%4 == 0 {
			posts = 2
		}
		for range posts {
			if code := p.postInbound(form, p.cfg.TwilioAuthToken); code != http.StatusOK {
				fail("inbound %s answered %d", sid, code)
			}
		}
		mu.Lock()
		sids = append(sids, sid)
		mu.Unlock()
	})
	run(16, func(i int) {
		r := p.sendSMS(a, fmt.Sprintf("single %d", i), recipient{Phone: remotes[i%len(remotes)]})
		if r.status != 200 && r.status != 202 {
			fail("single send answered %d %s", r.status, r.body)
		}
	})
	run(16, func(i int) {
		r := p.replyThread(a, threadIDs[remotes[i%3]], fmt.Sprintf(`{"body": "reply %d"}`, i))
		if r.status != 200 && r.status != 202 {
			fail("reply answered %d %s", r.status, r.body)
		}
	})
	run(3, func(i int) {
		rs := make([]recipient, 150)
		for j := range rs {
			rs[j] = recipient{Phone: remotes[(i+j)%len(remotes)]}
		}
		r := p.sendSMS(a, fmt.Sprintf("batch %d", i), rs...)
		if r.status != 202 {
			fail("batch answered %d %s", r.status, r.body)
			return
		}
		var accepted struct{ JobID int64 }
		r.decode(t, &accepted)
		mu.Lock()
		batches = append(batches, accepted.JobID)
		mu.Unlock()
	})
	run(12, func(i int) {
		r := p.patchThread(a, threadIDs[remotes[i%3]], `{"markRead": true}`)
		if r.status != 200 {
			fail("mark read answered %d %s", r.status, r.body)
		}
	})
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	for _, id := range batches {
		p.waitBatch(a, id, 2*time.Minute, func(b smsBatch) bool { return b.CompletedAt != nil })
	}

	var perSID []struct {
		SID string `bun:"upstream_sid"`
		N   int    `bun:"n"`
	}
	err := p.db.NewSelect().Model((*model.SMSMessage)(nil)).ColumnExpr("upstream_sid, count(*) AS n").
		Where("account_id = ? AND direction = 'inbound'", a.ID).Group("upstream_sid").Scan(ctx, &perSID)
	if err != nil {
		t.Fatal(err)
	}
	if len(perSID) != len(sids) {
		t.Errorf("%d inbound messages stored, want %d", len(perSID), len(sids))
	}
	for _, s := range perSID {
		if s.N != 1 {
			t.Errorf("inbound %s stored %d times", s.SID, s.N)
		}
	}

	// Each thread's counters against its rows: unread is the inbound
	// messages not read, the last activity no earlier than its newest
	// inbound message or accepted send.
	var threads []struct {
		ID            int64     `bun:"id"`
		Remote        string    `bun:"remote_phone"`
		Unread        int       `bun:"unread_count"`
		LastMessageAt time.Time `bun:"last_message_at"`
		UnreadRows    int       `bun:"unread_rows"`
		Newest        time.Time `bun:"newest"`
		Messages      int       `bun:"messages"`
	}
	err = p.db.NewRaw(`SELECT t.id, t.remote_phone, t.unread_count, t.last_message_at,
			(SELECT count(*) FROM sms_messages m WHERE m.thread_id = t.id AND m.direction = 'inbound' AND m.read_at IS NULL) AS unread_rows,
			(SELECT max(greatest(CASE WHEN m.direction = 'inbound' THEN m.created_at END, m.sent_at)) FROM sms_messages m WHERE m.thread_id = t.id) AS newest,
			(SELECT count(*) FROM sms_messages m WHERE m.thread_id = t.id) AS messages
		FROM sms_threads t WHERE t.account_id = ? ORDER BY t.id`, a.ID).Scan(ctx, &threads)
	if err != nil {
		t.Fatal(err)
	}
	if len(threads) != len(remotes) {
		t.Errorf("%d threads, want one per pair (%d)", len(threads), len(remotes))
	}
	for _, th := range threads {
		if th.Unread != th.UnreadRows {
			t.Errorf("thread %s: unreadCount %d, %d unread inbound messages", th.Remote, th.Unread, th.UnreadRows)
		}
		if th.LastMessageAt.Before(th.Newest) {
			t.Errorf("thread %s: lastMessageAt %s before its newest message %s", th.Remote, th.LastMessageAt, th.Newest)
		}
		if th.Messages == 0 {
			t.Errorf("thread %s has no message", th.Remote)
		}
	}
}
