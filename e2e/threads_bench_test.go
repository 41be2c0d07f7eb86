//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"parley/rules/billing"
)

// BenchmarkSMSThreads: GET /sms/threads (50 rows) and GET /sms/threads/{id}
// (100 messages) for an account holding 10,000 threads and 200,000
// messages, 8 concurrent clients each; reports req/s, p50 and p99, and logs
// the plans of both queries (the indexes that serve them).
func BenchmarkSMSThreads(b *testing.B) {
	p := startPlatform(b, options{sms: true, noWorker: true})
	a := newSMSAccount(b, p, billing.MicrosPerUSD, true, true)
	ctx := context.Background()
	seed := []string{
		// 10,000 threads of the account's number, activity spread over a day.
		`INSERT INTO sms_threads (account_id, owned_number_id, remote_phone, last_message_at, unread_count)
		 SELECT ?, n.id, '+1202' || lpad(i::text, 7, '0'), now() - i * interval '8 seconds', i % 3
		 FROM owned_numbers n, generate_series(1, 10000) AS i WHERE n.account_id = ?`,
		// 200,000 messages: 1,000 in the busiest thread, the rest spread.
		`INSERT INTO sms_messages (account_id, thread_id, direction, from_phone, to_phone, country, body, segments,
			encoding, status, upstream_sid, created_at)
		 SELECT t.account_id, t.id, CASE WHEN i % 2 = 0 THEN 'inbound' ELSE 'outbound' END, t.remote_phone, n.phone, 'US',
			'Message number ' || i || ' of a long conversation', 1, 'gsm7',
			CASE WHEN i % 2 = 0 THEN 'received' ELSE 'delivered' END, 'SMbench' || lpad(i::text, 25, '0'), now()
		 FROM generate_series(1, 200000) AS i
		 JOIN sms_threads t ON t.account_id = ? AND t.remote_phone = '+1202' || lpad((CASE WHEN i <= 1000 THEN 1 ELSE i % 10000 + 1 END)::text, 7, '0')
		 JOIN owned_numbers n ON n.id = t.owned_number_id`,
		`ANALYZE sms_threads`,
		`ANALYZE sms_messages`,
	}
	args := [][]any{{a.ID, a.ID}, {a.ID}, nil, nil}
	for i, q := range seed {
		if _, err := p.db.NewRaw(q, args[i]...).Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	var busiest int64
	if err := p.db.NewRaw("SELECT thread_id FROM sms_messages WHERE account_id = ? GROUP BY thread_id ORDER BY count(*) DESC LIMIT 1", a.ID).
		Scan(ctx, &busiest); err != nil {
		b.Fatal(err)
	}
	// The queries storage.SMS.Threads and ThreadMessages send, as plans.
	for _, q := range []string{
		`SELECT t.*, n.phone AS owned_number FROM sms_threads AS t JOIN owned_numbers AS n ON n.id = t.owned_number_id
		 WHERE t.account_id = ? AND t.archived_at IS NULL ORDER BY t.last_message_at DESC, t.id DESC LIMIT 50`,
		`SELECT * FROM sms_messages WHERE thread_id = ? AND id < ? ORDER BY id DESC LIMIT 100`,
	} {
		arg := any(a.ID)
		extra := []any{}
		if strings.Contains(q, "thread_id") {
			arg, extra = busiest, []any{int64(1) << 62}
		}
		var plan []string
		if err := p.db.NewRaw("EXPLAIN (ANALYZE, COSTS OFF) "+q, append([]any{arg}, extra...)...).Scan(ctx, &plan); err != nil {
			b.Fatal(err)
		}
		b.Logf("plan:\n%s", strings.Join(plan, "\n"))
	}
	b.ResetTimer()
	b.Run("list", func(b *testing.B) {
		for range b.N {
			loadGET(b, p.api.URL+"/api/v1/sms/threads?limit=50", a.Key)
		}
	})
	b.Run("read", func(b *testing.B) {
		for range b.N {
			loadGET(b, fmt.Sprintf("%s/api/v1/sms/threads/%d?limit=100", p.api.URL, busiest), a.Key)
		}
	})
}
