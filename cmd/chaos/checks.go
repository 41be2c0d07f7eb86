package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"parley/provider/twilio"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/rules/sms"
)

// documentedCodes are the failure codes docs/api.md lists for a failed job.
var documentedCodes = map[string]bool{
	"URL_NOT_ALLOWED": true, "FILE_TOO_LARGE": true, "DOWNLOAD_FAILED": true, "NO_AUDIO_STREAM": true,
	"MEDIA_UNREADABLE": true, "INSUFFICIENT_BALANCE": true, "CLEANUP_FAILED": true, "UNSUPPORTED_LANGUAGE": true,
	"ENGINE_FAILED": true, "BURN_FAILED": true, "JOB_CANCELED": true, "SERVICE_UNAVAILABLE": true, "INTERNAL_ERROR": true,
}

// waitSettled waits until every admitted job is final and every batch has
// a send outcome for each recipient, or r.settle passes.
func (r *run) waitSettled(ctx context.Context) {
	r.logf("faults done; waiting for the work to settle (at most %s)", r.settle)
	ctx, cancel := context.WithTimeout(ctx, r.settle)
	defer cancel()
	_ = waitFor(ctx, 2*time.Second, func() (bool, error) {
		var open int
		err := r.db.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM jobs WHERE account_id = $1 AND status NOT IN ('done', 'failed')) +
			(SELECT count(*) FROM sms_batches WHERE account_id = $1 AND completed_at IS NULL) +
			(SELECT count(*) FROM sms_messages WHERE account_id = $1 AND direction = 'outbound' AND status IN ('queued', 'sending'))`,
			r.account).Scan(&open)
		return err == nil && open == 0, nil
	})
	// Webhook deliveries follow the jobs' ends; the first retry waits 5 s,
	// the second 5 min.
	wctx, wcancel := context.WithTimeout(ctx, 6*time.Minute)
	defer wcancel()
	_ = waitFor(wctx, 2*time.Second, func() (bool, error) {
		return len(r.missingEvents(wctx)) == 0, nil
	})
}

// expectedEvent is a webhook event the run must see.
type expectedEvent struct{ Type, Subject string }

// expectedEvents: one per final job, per completed batch; inbound messages
// are matched by body (their ids are the API's).
func (r *run) expectedEvents(ctx context.Context) []expectedEvent {
	var out []expectedEvent
	rows, err := r.db.QueryContext(ctx, `SELECT kind, id, status FROM jobs WHERE account_id = $1 AND status IN ('done', 'failed')`, r.account)
	if err == nil {
		for rows.Next() {
			var kind, status string
			var id int64
			if rows.Scan(&kind, &id, &status) == nil {
				out = append(out, expectedEvent{Type: kind + "." + status, Subject: fmt.Sprint(id)})
			}
		}
		rows.Close()
	}
	rows, err = r.db.QueryContext(ctx, `SELECT id FROM sms_batches WHERE account_id = $1 AND completed_at IS NOT NULL`, r.account)
	if err == nil {
		for rows.Next() {
			var id int64
			if rows.Scan(&id) == nil {
				out = append(out, expectedEvent{Type: "sms.batch.completed", Subject: fmt.Sprint(id)})
			}
		}
		rows.Close()
	}
	return out
}

func (r *run) missingEvents(ctx context.Context) []string {
	got := map[expectedEvent]bool{}
	var bodies []string
	for _, d := range r.rc.deliveries() {
		got[expectedEvent{d.Type, d.Subject}] = true
		if d.Type == "sms.message.received" {
			bodies = append(bodies, d.Raw)
		}
	}
	var missing []string
	for _, e := range r.expectedEvents(ctx) {
		if !got[e] {
			missing = append(missing, e.Type+" "+e.Subject)
		}
	}
	r.mu.Lock()
	inbound := append([]string(nil), r.inbound...)
	r.mu.Unlock()
	for _, body := range inbound {
		found := false
		for _, raw := range bodies {
			if strings.Contains(raw, body) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, "sms.message.received for "+body)
		}
	}
	return missing
}

// check runs every check and records the findings.
func (r *run) check(ctx context.Context) {
	r.checkJobs(ctx)
	r.checkSMS(ctx)
	r.checkWebhooks(ctx)
	r.checkUploadCut(ctx)
	r.outcomes(ctx)
}

// checkJobs: final, documented codes, charged once per stage when done and
// never when failed.
func (r *run) checkJobs(ctx context.Context) {
	for _, j := range r.jobs {
		var status, code string
		var charges, stages int
		err := r.db.QueryRowContext(ctx, `SELECT j.status, coalesce(j.error_code, ''),
			(SELECT count(*) FROM credit_ledger l WHERE l.job_kind = j.kind AND l.job_id = j.id AND l.kind = 'charge'),
			(SELECT count(DISTINCT stage) FROM credit_ledger l WHERE l.job_kind = j.kind AND l.job_id = j.id AND l.kind = 'charge')
			FROM jobs j WHERE j.id = $1`, j.ID).Scan(&status, &code, &charges, &stages)
		switch {
		case err != nil:
			r.find(true, "%s: admitted but not readable: %v", j, err)
		case status != "done" && status != "failed":
			r.find(true, "%s: stuck in %s", j, status)
		case status == "failed" && !documentedCodes[code]:
			r.find(true, "%s: failed with undocumented code %q", j, code)
		case status == "failed" && charges > 0:
			r.find(true, "%s: failed (%s) but charged %d times", j, code, charges)
		case status == "failed":
			r.find(false, "%s: failed with %s (documented; not charged)", j, code)
		case status == "done" && charges == 0:
			r.find(true, "%s: done but never charged", j)
		case status == "done" && charges != stages:
			r.find(true, "%s: done, charged %d times for %d stages", j, charges, stages)
		}
	}
}

// sendDuplicate sends, straight to the carrier, a second SMS to the first
// recipient of the first batch: the check below must then fail.
func (r *run) sendDuplicate(ctx context.Context) error {
	if len(r.batches) == 0 || len(r.batches[0].Recipients) == 0 {
		return fmt.Errorf("no batch to duplicate a recipient of")
	}
	carrier, err := twilio.NewClient(twilio.Config{BaseURL: r.c.env["PARLEY_TWILIO_BASE_URL"],
		AccountSID: r.c.env["PARLEY_TWILIO_ACCOUNT_SID"], AuthToken: r.c.env["PARLEY_TWILIO_AUTH_TOKEN"]})
	if err != nil {
		return err
	}
	_, err = carrier.Send(ctx, twilio.SendRequest{From: r.sender, To: r.batches[0].Recipients[0], Body: "chaos self-test duplicate"})
	return err
}

// checkSMS compares every recipient the run sent to, batch and single,
// with the carrier's record (compareSMS), and counts the outbound messages
// left unsettled.
func (r *run) checkSMS(ctx context.Context) {
	carrier, err := twilio.NewClient(twilio.Config{BaseURL: r.c.env["PARLEY_TWILIO_BASE_URL"],
		AccountSID: r.c.env["PARLEY_TWILIO_ACCOUNT_SID"], AuthToken: r.c.env["PARLEY_TWILIO_AUTH_TOKEN"]})
	if err != nil {
		r.find(true, "carrier client: %v", err)
		return
	}
	// The carrier's record: every message from the run's number (the
	// list Twilio answers, by From), by recipient.
	msgs, err := carrier.List(ctx, twilio.ListFilter{From: r.sender, PageSize: 1000})
	if err != nil {
		r.find(true, "list the carrier's messages: %v", err)
		return
	}
	atCarrier := map[string][]twilio.Message{}
	for _, m := range msgs {
		atCarrier[m.To] = append(atCarrier[m.To], m)
	}
	parley, stuck, total, err := r.parleySMS(ctx)
	if err != nil {
		r.find(true, "read the account's messages: %v", err)
		return
	}
	var sent []sentTo
	for _, b := range r.batches {
		for _, to := range b.Recipients {
			sent = append(sent, sentTo{Phone: to, What: fmt.Sprintf("sms batch %d", b.ID)})
		}
	}
	for _, s := range r.singles {
		sent = append(sent, sentTo{Phone: s.To, What: "single SMS", Answer: s.Status})
	}
	cmp := compareSMS(sent, parley, atCarrier)
	r.mu.Lock()
	r.findings = append(r.findings, cmp.findings...)
	r.mu.Unlock()
	r.find(false, "SMS compared per recipient with the carrier: %d accepted there and charged once (%d of them undelivered), %d refused and in neither, %d disagree",
		cmp.accepted, cmp.undelivered, cmp.refused, len(sent)-cmp.accepted-cmp.refused)
	if stuck > 0 {
		r.find(true, "%d of %d outbound SMS never settled (queued or sending)", stuck, total)
	}
}

// parleySMS reads the account's outbound messages by recipient, each with
// its charges (by the message's job reference, and whether one is under the
// message's key), and counts those still queued or sending.
func (r *run) parleySMS(ctx context.Context) (map[string][]parleySMS, int, int, error) {
	keyed := map[string]bool{}
	rows, err := r.db.QueryContext(ctx, `SELECT idempotency_key FROM credit_ledger WHERE account_id = $1 AND kind = 'charge' AND service = $2`,
		r.account, billing.ServiceSMS)
	if err != nil {
		return nil, 0, 0, err
	}
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			rows.Close()
			return nil, 0, 0, err
		}
		keyed[key] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, 0, err
	}
	rows, err = r.db.QueryContext(ctx, `SELECT m.id, m.to_phone, m.status, coalesce(m.upstream_sid, ''),
		(SELECT count(*) FROM credit_ledger l WHERE l.job_kind = $2 AND l.job_id = m.id AND l.kind = 'charge')
		FROM sms_messages m WHERE m.account_id = $1 AND m.direction = 'outbound'`, r.account, jobspec.SMSMessage)
	if err != nil {
		return nil, 0, 0, err
	}
	defer rows.Close()
	out := map[string][]parleySMS{}
	var stuck, total int
	for rows.Next() {
		var m parleySMS
		var to string
		if err := rows.Scan(&m.ID, &to, &m.Status, &m.SID, &m.Charges); err != nil {
			return nil, 0, 0, err
		}
		m.Keyed = keyed[billing.SMSSendKey(m.ID)]
		out[to] = append(out[to], m)
		total++
		if m.Status == sms.Queued || m.Status == sms.Sending {
			stuck++
		}
	}
	return out, stuck, total, rows.Err()
}

// checkWebhooks: every expected event at least once, each event under one
// id whatever the number of attempts.
func (r *run) checkWebhooks(ctx context.Context) {
	for _, m := range r.missingEvents(ctx) {
		r.find(true, "webhook never delivered: %s", m)
	}
	ids := map[expectedEvent]map[string]bool{}
	for _, d := range r.rc.deliveries() {
		k := expectedEvent{d.Type, d.Subject}
		if d.Type == "sms.message.received" {
			k.Subject = d.Raw // one message per body
		}
		if ids[k] == nil {
			ids[k] = map[string]bool{}
		}
		ids[k][d.EventID] = true
		if d.HeaderID != d.EventID {
			r.find(true, "webhook %s %s: header id %s, body id %s", d.Type, d.Subject, d.HeaderID, d.EventID)
		}
	}
	for k, set := range ids {
		if len(set) > 1 && k.Type != "sms.message.received" {
			r.find(true, "webhook %s %s delivered under %d event ids", k.Type, k.Subject, len(set))
		}
	}
}

// checkUploadCut: no job, no charge; and the objects the cut upload left.
func (r *run) checkUploadCut(ctx context.Context) {
	c := r.cut
	if c.from.IsZero() {
		return
	}
	if c.jobsAfter != c.jobsBefore {
		r.find(true, "the upload cut off by the killed API left %d job(s)", c.jobsAfter-c.jobsBefore)
	}
	if c.ledgerAfter != c.ledgerBefore {
		r.find(true, "the upload cut off by the killed API left %d ledger entr(ies)", c.ledgerAfter-c.ledgerBefore)
	}
	from, to := c.from.Add(-time.Second), c.to.Add(time.Second)
	r.find(false, "the upload cut off by the killed API (%d MB sent) left no job and no ledger entry; right after the cut: %d object(s) and %d incomplete multipart upload(s) with no job",
		c.sent>>20, c.objects, c.incomplete)
	if r.uploadCleanup <= 0 {
		return
	}
	if wait := time.Until(c.to.Add(r.uploadCleanup)); wait > 0 {
		r.logf("waiting %s for the end of the cleanup period of orphaned uploads (%s)", wait.Round(time.Second), r.uploadCleanup)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	objects, incomplete, err := r.orphans(ctx, from, to)
	if err != nil {
		r.find(true, "list the object store: %v", err)
		return
	}
	if objects+incomplete > 0 {
		r.find(true, "%s after the cut (the cleanup period), the upload still left %d object(s) and %d incomplete multipart upload(s)",
			r.uploadCleanup, objects, incomplete)
	} else {
		r.find(false, "%s after the cut (the cleanup period) nothing of it is left", r.uploadCleanup)
	}
}

// orphans counts objects under uploads/ written in [from, to] that no job
// names, and incomplete multipart uploads begun then.
func (r *run) orphans(ctx context.Context, from, to time.Time) (objects, incomplete int, err error) {
	mc, err := minio.New(r.c.env["MINIO_ENDPOINT"], &minio.Options{
		Creds: credentials.NewStaticV4(r.c.env["MINIO_ACCESS_KEY"], r.c.env["MINIO_SECRET_KEY"], ""),
	})
	if err != nil {
		return 0, 0, err
	}
	bucket := r.c.env["MINIO_BUCKET"]
	for o := range mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: jobspec.UploadPrefix, Recursive: true}) {
		if o.Err != nil {
			return 0, 0, o.Err
		}
		if o.LastModified.Before(from) || o.LastModified.After(to) {
			continue
		}
		var n int
		if err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE media_key = $1`, o.Key).Scan(&n); err != nil {
			return 0, 0, err
		}
		if n == 0 {
			objects++
		}
	}
	// MinIO lists multipart uploads only for one exact key, which the
	// client of a cut upload never learns; its drives show them. Every
	// drive of the set holds each upload's metadata: count node 1's.
	dirs, _ := filepath.Glob(filepath.Join(r.c.dir, "minio", "node1", ".minio.sys", "multipart", "*", "*"))
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil || !st.IsDir() {
			continue
		}
		if !st.ModTime().Before(from) && !st.ModTime().After(to) {
			incomplete++
		}
	}
	return objects, incomplete, nil
}

// outcomes fills each row's outcome from its jobs' and batches' ends.
func (r *run) outcomes(ctx context.Context) {
	for _, row := range r.rows {
		var parts []string
		for _, j := range row.jobs {
			var status, code string
			if err := r.db.QueryRowContext(ctx, `SELECT status, coalesce(error_code, '') FROM jobs WHERE id = $1`, j.ID).Scan(&status, &code); err != nil {
				status = "unreadable"
			}
			if code != "" {
				status += " " + code
			}
			parts = append(parts, fmt.Sprintf("%s %d %s", j.Kind, j.ID, status))
		}
		for _, id := range row.batches {
			// Undelivered is apart from failed: the carrier accepted it (and
			// each batch has one recipient it never delivers to), while a
			// failed message never reached it. The batch's own status counts
			// both as failures (partial).
			var status string
			var total, sent, undelivered, failed, unsettled int
			_ = r.db.QueryRowContext(ctx, `SELECT b.status, b.total_recipients,
				count(*) FILTER (WHERE m.status IN ('sent', 'delivered')),
				count(*) FILTER (WHERE m.status = 'undelivered'),
				count(*) FILTER (WHERE m.status = 'failed'),
				count(*) FILTER (WHERE m.status IN ('queued', 'sending'))
				FROM sms_batches b JOIN sms_messages m ON m.batch_id = b.id WHERE b.id = $1
				GROUP BY b.id`, id).Scan(&status, &total, &sent, &undelivered, &failed, &unsettled)
			parts = append(parts, fmt.Sprintf("batch %d %s: %d sent or delivered, %d undelivered, %d failed, %d unsettled of %d",
				id, status, sent, undelivered, failed, unsettled, total))
		}
		if row.note != "" {
			parts = append(parts, row.note)
		}
		row.Outcome = strings.Join(parts, "; ")
	}
}

// report prints the table and the findings; it says whether any finding
// is a failure.
func (r *run) report(w io.Writer) (failed bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tWHEN\tIN FLIGHT\tOUTCOME")
	for _, row := range r.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", row.Fault, row.At, row.InFlight, row.Outcome)
	}
	tw.Flush()
	var jobsDone, jobsFailed int
	for _, j := range r.jobs {
		var status string
		_ = r.db.QueryRow(`SELECT status FROM jobs WHERE id = $1`, j.ID).Scan(&status)
		switch status {
		case "done":
			jobsDone++
		case "failed":
			jobsFailed++
		}
	}
	recipients := 0
	for _, b := range r.batches {
		recipients += len(b.Recipients)
	}
	fmt.Fprintf(w, "\nadmitted: %d jobs (%d done, %d failed), %d batches (%d recipients), %d single sends, %d inbound; %d webhook deliveries; %s\n",
		len(r.jobs), jobsDone, jobsFailed, len(r.batches), recipients, len(r.singles), len(r.inbound), len(r.rc.deliveries()), r.since())
	sort.SliceStable(r.findings, func(i, j int) bool { return r.findings[i].Fatal && !r.findings[j].Fatal })
	for _, f := range r.findings {
		tag := "note"
		if f.Fatal {
			tag = "FAIL"
			failed = true
		}
		fmt.Fprintf(w, "%s  %s\n", tag, f.Text)
	}
	if !failed {
		fmt.Fprintln(w, "no loss, no duplicate, nothing stuck")
	}
	return failed
}
