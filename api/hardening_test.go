//go:build integration

package api

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"strings"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/jobspec"
	"parley/rules/medialink"
	"parley/service/jobs"
	"parley/storage"
)

// subtitleJob stores a subtitle job of the account in status with an SRT.
func subtitleJob(t *testing.T, h *harness, accountID, status string) model.Job {
	t.Helper()
	d := 10.0
	j := model.Job{AccountID: accountID, Kind: jobspec.Subtitles, Status: status, InputKind: "file", FileName: "talk.mp4",
		Source: "api", LanguageRequested: "auto", DurationSec: &d, BurnRuns: 1}
	if status == jobspec.Done || status == jobspec.Failed {
		now := time.Now()
		j.CompletedAt = &now
	}
	ctx := context.Background()
	if err := (storage.Jobs{DB: h.db}).Insert(ctx, &j); err != nil {
		t.Fatal(err)
	}
	srt := "1\n00:00:01,000 --> 00:00:02,000\nthe whole transcript\n\n"
	if err := (storage.SubtitleVersions{DB: h.db}).SaveGenerated(ctx, j.ID, srt); err != nil {
		t.Fatal(err)
	}
	return j
}

// A job that did not complete keeps its captions to itself: a failed job's
// transcript was never paid for.
func TestSRTOnlyOfACompletedJob(t *testing.T) {
	h := newHarness(t)
	acc, key := testenv.Account(t, h.db, testenv.AccountOpts{})
	for _, status := range []string{jobspec.Failed, jobspec.Transcribing, jobspec.Burning} {
		j := subtitleJob(t, h, acc.ID, status)
		if status == jobspec.Burning {
			// burning before its first completion: the first burn, not a re-burn
			if _, err := h.db.NewUpdate().Model((*model.Job)(nil)).Set("completed_at = NULL").Where("id = ?", j.ID).Exec(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		h.do(http.MethodGet, fmt.Sprintf("/subtitles/%d/srt", j.ID), key.Secret, nil).wantError(t, http.StatusConflict, "JOB_NOT_DONE")
	}
	done := subtitleJob(t, h, acc.ID, jobspec.Done)
	if r := h.do(http.MethodGet, fmt.Sprintf("/subtitles/%d/srt", done.ID), key.Secret, nil); r.status != http.StatusOK || !strings.Contains(string(r.body), "whole transcript") {
		t.Fatalf("done job: %d %s", r.status, r.body)
	}
}

// Text a client sends is stored as sent or refused with a 400 naming the
// field, never a 500 from the database.
func TestControlCharactersAreRefusedNotStored(t *testing.T) {
	h := newLoopbackURLHarness(t)
	acc, key := testenv.Account(t, h.db, testenv.AccountOpts{})
	expires := h.clock.Now().Add(24 * time.Hour).Format(time.RFC3339)
	for name, raw := range map[string]string{
		"NUL":           "ci\u0000key",
		"escape":        "ci\u001bkey",
		"newline":       "ci\nkey",
		"bidi override": "ci\u202ekey",
		"DEL":           "ci\u007fkey",
	} {
		t.Run("key name "+name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/keys", key.Secret,
				h.jsonBody(map[string]any{"name": raw, "scopes": []string{"profile:read"}, "expires_at": expires}),
				"Content-Type", "application/json")
			r.wantError(t, http.StatusBadRequest, "VALIDATION_ERROR")
			if r.env.Error.Details["field"] != "name" {
				t.Fatalf("details %v", r.env.Error.Details)
			}
		})
	}
	t.Run("key name not UTF-8", func(t *testing.T) {
		body := []byte(`{"name":"ci` + "\xff\xfe" + `","scopes":["profile:read"],"expires_at":"` + expires + `"}`)
		h.do(http.MethodPost, "/keys", key.Secret, bytes.NewReader(body), "Content-Type", "application/json").
			wantError(t, http.StatusBadRequest, "VALIDATION_ERROR")
	})

	done := subtitleJob(t, h, acc.ID, jobspec.Done)
	for name, cue := range map[string]string{"NUL": "a\u0000b", "bell": "a\u0007b", "not UTF-8": "a\xffb"} {
		t.Run("SRT "+name, func(t *testing.T) {
			srt := "1\n00:00:01,000 --> 00:00:02,000\n" + cue + "\n\n"
			r := h.do(http.MethodPut, fmt.Sprintf("/subtitles/%d/srt", done.ID), key.Secret, strings.NewReader(srt), "Content-Type", "text/plain")
			r.wantError(t, http.StatusBadRequest, "VALIDATION_ERROR")
			if r.env.Error.Details["field"] != "srt" {
				t.Fatalf("details %v", r.env.Error.Details)
			}
		})
	}

	upload := func(fileName string, fields ...string) reply {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for i := 0; i+1 < len(fields); i += 2 {
			_ = mw.WriteField(fields[i], fields[i+1])
		}
		// RFC 7578 allows a percent-encoded file name, which is how a client
		// gets bytes such as NUL past the header syntax.
		hdr := textproto.MIMEHeader{}
		hdr.Set("Content-Disposition", `form-data; name="file"; filename*=UTF-8''`+url.PathEscape(fileName))
		fw, _ := mw.CreatePart(hdr)
		fw.Write([]byte("not really media"))
		mw.Close()
		return h.do(http.MethodPost, "/subtitles", key.Secret, &buf, "Content-Type", mw.FormDataContentType())
	}
	// A URL job is named after its percent-decoded last path segment.
	for name, u := range map[string]string{
		"URL file name NUL":        "https://127.0.0.1/a%00b.mp4",
		"URL file name escape":     "https://127.0.0.1/talk%1B%5B31m.mp4",
		"URL file name not UTF-8":  "https://127.0.0.1/talk%ff.mp4",
		"URL file name bidi":       "https://127.0.0.1/talk%E2%80%AEgnp.mp4",
		"URL file name newline":    "https://127.0.0.1/dir/talk%0A.mp4",
		"URL file name DEL in dir": "https://127.0.0.1/dir/%7F",
	} {
		t.Run(name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/transcribe", key.Secret, h.jsonBody(map[string]any{"url": u}), "Content-Type", "application/json")
			r.wantError(t, http.StatusBadRequest, "VALIDATION_ERROR")
			if r.env.Error.Details["field"] != "url" {
				t.Fatalf("details %v, want field url", r.env.Error.Details)
			}
		})
	}
	if n, err := h.db.NewSelect().Model((*model.Job)(nil)).Where("account_id = ?", acc.ID).Where("input_kind = 'url'").Count(context.Background()); err != nil || n != 0 {
		t.Fatalf("%d URL jobs stored (%v), want none", n, err)
	}

	for name, tc := range map[string]struct {
		file   string
		fields []string
		field  string
	}{
		"file name NUL":         {file: "talk\u0000.mp4", field: "file"},
		"file name bidi":        {file: "talk\u202egnp.mp4", field: "file"},
		"file name not UTF-8":   {file: "talk\xff.mp4", field: "file"},
		"style font control":    {file: "talk.mp4", fields: []string{"style", `{"font":"Dejavu\u0001Sans"}`}, field: "style.font"},
		"field with a NUL byte": {file: "talk.mp4", fields: []string{"language", "en\u0000"}, field: "language"},
	} {
		t.Run(name, func(t *testing.T) {
			r := upload(tc.file, tc.fields...)
			r.wantError(t, http.StatusBadRequest, "VALIDATION_ERROR")
			if r.env.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", r.env.Error.Details, tc.field)
			}
		})
	}
}

// newLoopbackURLHarness lets URL jobs name loopback hosts, so a URL passes
// the address check and reaches the rules about what it names.
func newLoopbackURLHarness(t *testing.T) *harness {
	t.Helper()
	cfg := testenv.Config(t)
	cfg.URLAllowPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	return newHarnessWith(t, testenv.DB(t), cfg, &clock{now: time.Now().UTC()})
}

// An Idempotency-Key is printable ASCII: other bytes have no agreed
// character set in a header, and invalid UTF-8 would be re-encoded on the
// way into the database, where two keys could then meet.
func TestIdempotencyKeyIsPrintableASCII(t *testing.T) {
	h := newLoopbackURLHarness(t)
	acc, key := testenv.Account(t, h.db, testenv.AccountOpts{})
	send := func(idem string) reply {
		return h.do(http.MethodPost, "/transcribe", key.Secret, h.jsonBody(map[string]any{"url": "https://127.0.0.1/talk.mp4"}),
			"Content-Type", "application/json", "Idempotency-Key", idem)
	}
	for name, idem := range map[string]string{
		"invalid UTF-8":     "retry-\xff\xfe",
		"lone continuation": "retry-\x80",
		"UTF-8 letter":      "caf\u00e9",
		"UTF-8 bidi":        "retry\u202e1",
		"tab inside":        "retry\t1",
	} {
		t.Run(name, func(t *testing.T) {
			r := send(idem)
			r.wantError(t, http.StatusBadRequest, "VALIDATION_ERROR")
			if r.env.Error.Details["field"] != "Idempotency-Key" {
				t.Fatalf("details %v", r.env.Error.Details)
			}
		})
	}
	if n, err := h.db.NewSelect().Model((*model.Job)(nil)).Where("account_id = ?", acc.ID).Count(context.Background()); err != nil || n != 0 {
		t.Fatalf("%d jobs stored (%v), want none", n, err)
	}
	t.Run("printable ASCII with spaces", func(t *testing.T) {
		var first, again jobs.Accepted
		send(" retry 1/{ok}~ ").wantOK(t, http.StatusAccepted, &first)
		send("retry 1/{ok}~").wantOK(t, http.StatusAccepted, &again)
		if first.ID != again.ID {
			t.Fatalf("replay made job %d, want %d", again.ID, first.ID)
		}
	})
}

// Exactly one spelling of a media token opens the file: every other value
// of its last character is refused.
func TestMediaTokenHasOneSpelling(t *testing.T) {
	h := newHarness(t)
	objects := testenv.Objects(t)
	if _, err := objects.Put(context.Background(), "tests/token.mp4", strings.NewReader("video bytes"), 11, "video/mp4"); err != nil {
		t.Fatal(err)
	}
	token := medialink.NewSigner(h.cfg.MediaSecret, h.cfg.MediaLinkTTL).Token("tests/token.mp4", h.clock.Now())
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	opened := 0
	for _, ch := range alphabet + "=+/." {
		variant := token[:len(token)-1] + string(ch)
		r := h.do(http.MethodGet, "/media/"+variant, "", nil)
		switch r.status {
		case http.StatusOK:
			opened++
			if variant != token {
				t.Errorf("variant %q opened the file", variant)
			}
		case http.StatusForbidden:
		case http.StatusNotFound:
			// A trailing slash makes another path, which no route has.
			if ch != '/' {
				t.Errorf("variant %q: %d %s", variant, r.status, r.body)
			}
		default:
			t.Errorf("variant %q: %d %s", variant, r.status, r.body)
		}
	}
	if opened != 1 {
		t.Fatalf("%d spellings opened the file, want exactly 1", opened)
	}
}
