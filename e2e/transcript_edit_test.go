//go:build integration

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"parley/devstack/testenv"
	"parley/rules/billing"
	"parley/rules/transcript"
)

// transcriptView is GET/PUT .../transcript's data.
type transcriptView struct {
	ID         int64             `json:"id"`
	Version    int               `json:"version"`
	Changed    bool              `json:"changed"`
	Text       string            `json:"text"`
	Words      []transcript.Word `json:"words"`
	SRTVersion int               `json:"srt_version"`
}

func putTranscript(p *platform, key, path string, body string) reply {
	return p.do(http.MethodPut, path+"/transcript", key, strings.NewReader(body), "Content-Type", "application/json")
}

// editBody is PUT .../transcript's body; base 0 sends no base_version.
func editBody(text string, base int) string {
	body := map[string]any{"text": text}
	if base != 0 {
		body["base_version"] = base
	}
	b, _ := json.Marshal(body)
	return string(b)
}

// withFirstWord is the words' text with the first word replaced by one of
// candidates that it is not.
func withFirstWord(words []transcript.Word, candidates ...string) (string, string) {
	texts := make([]string, len(words))
	for i, w := range words {
		texts[i] = w.Word
	}
	for _, c := range candidates {
		if !strings.EqualFold(strings.Trim(texts[0], ".,"), c) {
			texts[0] = c
			break
		}
	}
	return strings.Join(texts, " "), texts[0]
}

// TestTranscriptEdits: a transcript corrected through the API becomes a new
// version that every export, a subtitle job's SRT and its re-burn follow;
// edits of a replaced version are refused; bad edits are 400 naming the
// field. Then the same edit in the console.
func TestTranscriptEdits(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	_, other := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	audio := speechFixture(t, "known.wav", knownText)

	var accepted struct {
		ID int64 `json:"id"`
	}
	p.upload("/transcribe", key.Secret, audio, []string{"language", "en"}).want(t, 202, "").decode(t, &accepted)
	subID := createSubJob(t, p, key.Secret, subtitleVideo(t, false), "language", "en")
	trPath := jobPath("transcribe", accepted.ID)
	if j := p.waitFor(trPath, key.Secret, 3*time.Minute, final); j.Status != "done" {
		t.Fatalf("transcription ended %s", j.Status)
	}
	var v1 transcriptView
	p.do(http.MethodGet, trPath+"/transcript", key.Secret, nil).want(t, 200, "").decode(t, &v1)
	if v1.Version != 1 || len(v1.Words) < 5 || v1.Text == "" || v1.SRTVersion != 0 {
		t.Fatalf("version 1: %+v", v1)
	}

	t.Run("edit, then every export follows", func(t *testing.T) {
		text, first := withFirstWord(v1.Words, "Zebra", "Walrus")
		var v2 transcriptView
		putTranscript(p, key.Secret, trPath, editBody(text, 1)).want(t, 200, "").decode(t, &v2)
		if v2.Version != 2 || !v2.Changed || len(v2.Words) != len(v1.Words) || v2.Words[0].Word != first {
			t.Fatalf("edit answered %+v", v2)
		}
		if w := v2.Words[0]; w.Start != v1.Words[0].Start || w.End != v1.Words[0].End {
			t.Fatalf("the corrected word is timed %.3f..%.3f, the word it replaced %.3f..%.3f", w.Start, w.End, v1.Words[0].Start, v1.Words[0].End)
		}
		for i := 1; i < len(v1.Words); i++ {
			if v2.Words[i] != v1.Words[i] {
				t.Fatalf("word %d changed from %+v to %+v", i, v1.Words[i], v2.Words[i])
			}
		}
		var j struct {
			TranscriptVersion int    `json:"transcript_version"`
			TranscriptText    string `json:"transcript_text"`
		}
		p.do(http.MethodGet, trPath, key.Secret, nil).want(t, 200, "").decode(t, &j)
		if j.TranscriptVersion != 2 || !strings.HasPrefix(j.TranscriptText, first+" ") {
			t.Fatalf("job after the edit: %+v", j)
		}
		for _, f := range []string{"txt", "md", "srt", "vtt", "json"} {
			body := string(p.do(http.MethodGet, trPath+"/export?format="+f, key.Secret, nil).want(t, 200, "").body)
			if !strings.Contains(body, first) {
				t.Fatalf("%s export does not say %q: %s", f, first, body)
			}
			if f == "json" && !strings.Contains(body, `"transcript_version": 2`) {
				t.Fatalf("json export without the version: %s", body)
			}
		}
		var same transcriptView
		putTranscript(p, key.Secret, trPath, editBody(" "+strings.ReplaceAll(text, " ", "\n")+" ", 2)).want(t, 200, "").decode(t, &same)
		if same.Changed || same.Version != 2 {
			t.Fatalf("an edit saying the same: %+v", same)
		}
	})

	t.Run("edits of a replaced version are refused", func(t *testing.T) {
		r := putTranscript(p, key.Secret, trPath, editBody("from version one", 1)).want(t, 409, "VERSION_CONFLICT")
		if r.Error.Details["currentVersion"] != 2.0 {
			t.Fatalf("conflict: %s", r.body)
		}
		// Six edits of version 2 at once: one lands, five are told which
		// version won.
		var wg sync.WaitGroup
		statuses := make([]int, 6)
		for i := range statuses {
			wg.Go(func() {
				statuses[i] = putTranscript(p, key.Secret, trPath, editBody(fmt.Sprintf("%s edit %d", v1.Text, i), 2)).status
			})
		}
		wg.Wait()
		won := 0
		for _, s := range statuses {
			switch s {
			case 200:
				won++
			case 409:
			default:
				t.Fatalf("concurrent edits answered %v", statuses)
			}
		}
		var now transcriptView
		p.do(http.MethodGet, trPath+"/transcript", key.Secret, nil).want(t, 200, "").decode(t, &now)
		if won != 1 || now.Version != 3 {
			t.Fatalf("concurrent edits: statuses %v, now at version %d", statuses, now.Version)
		}
	})

	t.Run("bad edits are 400 naming the field", func(t *testing.T) {
		for _, tc := range []struct{ body, field string }{
			{`{}`, "text"},
			{`{"text":""}`, "text"},
			{`{"text":"  \n "}`, "text"},
			{`{"text":"bell\u0007"}`, "text"},
			{`{"text":7}`, "text"},
			{`{"text":"ok","base_version":0}`, "base_version"},
			{`{"text":"ok","base_version":"2"}`, "base_version"},
			{`{"text":"ok","base_version":1.5}`, "base_version"},
			{`{"text":"ok","words":[]}`, "words"},
			{`[]`, "body"},
			{`{"text":`, "body"},
		} {
			r := putTranscript(p, key.Secret, trPath, tc.body).want(t, 400, "VALIDATION_ERROR")
			if r.Error.Details["field"] != tc.field {
				t.Fatalf("%s: %s, want field %s", tc.body, r.body, tc.field)
			}
		}
		p.do(http.MethodPut, trPath+"/transcript", key.Secret, strings.NewReader("plain words"), "Content-Type", "text/plain").want(t, 415, "UNSUPPORTED_MEDIA_TYPE")
		putTranscript(p, other.Secret, trPath, editBody("not mine", 0)).want(t, 404, "NOT_FOUND")
		p.do(http.MethodGet, trPath+"/transcript", other.Secret, nil).want(t, 404, "NOT_FOUND")
		putTranscript(p, key.Secret, jobPath("transcribe", accepted.ID+1000), editBody("none", 0)).want(t, 404, "NOT_FOUND")
		putTranscript(p, key.Secret, subPath(accepted.ID, ""), editBody("a transcription is no subtitle job", 0)).want(t, 404, "NOT_FOUND")
		if v := getVersion(t, p, key.Secret, trPath); v != 3 {
			t.Fatalf("refused edits moved the version to %d", v)
		}
	})

	t.Run("a subtitle job's SRT and re-burn follow the edit", func(t *testing.T) {
		sub := waitSubDone(t, p, key.Secret, subID)
		duration := *sub.VideoDurationSec
		original, _ := downloadOutput(t, p, sub, t.TempDir())
		_, cues := getSubSRT(t, p, key.Secret, subID, duration)
		var sv1 transcriptView
		p.do(http.MethodGet, subPath(subID, "/transcript"), key.Secret, nil).want(t, 200, "").decode(t, &sv1)
		if sv1.Version != 1 || sv1.SRTVersion != 1 || len(sv1.Words) == 0 {
			t.Fatalf("subtitle transcript: %+v", sv1)
		}
		text, first := withFirstWord(sv1.Words, "Zebra", "Walrus")
		var sv2 transcriptView
		putTranscript(p, key.Secret, subPath(subID, ""), editBody(text, 1)).want(t, 200, "").decode(t, &sv2)
		srt := p.do(http.MethodGet, subPath(subID, "/srt"), key.Secret, nil).want(t, 200, "")
		if sv2.Version != 2 || sv2.SRTVersion != 2 || srt.header.Get("X-Subtitle-Version") != "2" || !strings.Contains(string(srt.body), first) {
			t.Fatalf("after the transcript edit: %+v, srt v%s %q", sv2, srt.header.Get("X-Subtitle-Version"), srt.body)
		}
		// An SRT edited since stays current, until the next transcript
		// edit replaces it.
		putSubSRT(t, p, key.Secret, subID, "1\n00:00:00,500 --> 00:00:02,000\nEdited by hand\n").want(t, 200, "")
		var sv2b transcriptView
		p.do(http.MethodGet, subPath(subID, "/transcript"), key.Secret, nil).want(t, 200, "").decode(t, &sv2b)
		if sv2b.Version != 2 || sv2b.SRTVersion != 3 {
			t.Fatalf("after an SRT edit: %+v", sv2b)
		}
		text, first = withFirstWord(sv2.Words, "Walrus", "Zebra")
		var sv3 transcriptView
		putTranscript(p, key.Secret, subPath(subID, ""), editBody(text, 2)).want(t, 200, "").decode(t, &sv3)
		srtNow, _ := getSubSRT(t, p, key.Secret, subID, duration)
		if sv3.Version != 3 || sv3.SRTVersion != 4 || !strings.Contains(srtNow, first) || strings.Contains(srtNow, "Edited by hand") {
			t.Fatalf("after the second transcript edit: %+v, srt %q", sv3, srtNow)
		}
		after := reburnAndWait(t, p, key.Secret, sub)
		reburned, _ := downloadOutput(t, p, after, t.TempDir())
		captionDrawnIn(t, fmt.Sprintf("first burn vs re-burn after the edit to %q", first), original, reburned, cueMid(cues[0]), bandBottom)
	})

	t.Run("console", func(t *testing.T) {
		b := newBrowser(t, "transcript-edit")
		b.signIn(p, mails, acc.Email)
		b.run(chromedp.Navigate(fmt.Sprintf("%s/console/transcribe/%d", p.api.URL, accepted.ID)), chromedp.WaitVisible("#transcript-form", chromedp.ByID),
			chromedp.ScrollIntoView("#transcript", chromedp.ByID))
		b.shot("transcript-form")
		if v := b.text("#transcript-version"); !strings.Contains(v, "3") {
			t.Fatalf("the page shows %q, want version 3", v)
		}
		var first string
		b.run(chromedp.Evaluate(`(() => { const a = document.querySelector("#transcript-form textarea");
			a.value = a.value.replace(/^\S+/, "Quokka"); return a.value.split(/\s/)[0]; })()`, &first))
		b.run(chromedp.Click("#save-transcript", chromedp.ByID), chromedp.WaitVisible("#transcript-saved", chromedp.ByID))
		b.shot("transcript-saved")
		if words := b.text("#words"); first != "Quokka" || !strings.HasPrefix(strings.TrimSpace(words), "Quokka ") {
			t.Fatalf("after saving, the page's words are %q", words)
		}
		if v := getVersion(t, p, key.Secret, trPath); v != 4 {
			t.Fatalf("the console's edit made version %d", v)
		}
		// Another edit lands while the page is open: saving the page's
		// text is refused with the newest version named, and the typed
		// text stays in the form.
		putTranscript(p, key.Secret, trPath, editBody("Meanwhile "+v1.Text, 4)).want(t, 200, "")
		b.run(chromedp.Evaluate(`(() => { const a = document.querySelector("#transcript-form textarea");
			a.value = "Typed " + a.value; return true; })()`, nil))
		b.run(chromedp.Click("#save-transcript", chromedp.ByID), chromedp.WaitVisible("#transcript-error", chromedp.ByID),
			chromedp.ScrollIntoView("#transcript", chromedp.ByID))
		b.shot("transcript-conflict")
		var typed string
		b.run(chromedp.Evaluate(`document.querySelector("#transcript-form textarea").value`, &typed))
		if msg := b.text("#transcript-error"); !strings.Contains(msg, "version 5") || !strings.HasPrefix(typed, "Typed Quokka") {
			t.Fatalf("conflict shown as %q, form holds %q", msg, typed)
		}
		if v := getVersion(t, p, key.Secret, trPath); v != 5 {
			t.Fatalf("the refused edit moved the version to %d", v)
		}
		// Saved again, it replaces the newest version knowingly.
		b.run(chromedp.Click("#save-transcript", chromedp.ByID), chromedp.WaitVisible("#transcript-saved", chromedp.ByID))
		if v := getVersion(t, p, key.Secret, trPath); v != 6 {
			t.Fatalf("saving again made version %d", v)
		}

		// With the script off the form is the same plain form.
		b.run(emulation.SetScriptExecutionDisabled(true),
			chromedp.Navigate(fmt.Sprintf("%s/console/transcribe/%d", p.api.URL, accepted.ID)), chromedp.WaitVisible("#transcript-form", chromedp.ByID),
			chromedp.SendKeys("#transcript-form textarea", "Wombat ", chromedp.ByQuery),
			chromedp.Click("#save-transcript", chromedp.ByID), chromedp.WaitVisible("#transcript-saved", chromedp.ByID),
			chromedp.ScrollIntoView("#transcript", chromedp.ByID))
		b.shot("transcript-saved-without-script")
		var now transcriptView
		p.do(http.MethodGet, trPath+"/transcript", key.Secret, nil).want(t, 200, "").decode(t, &now)
		if now.Version != 7 || !strings.Contains(now.Text, "Wombat") {
			t.Fatalf("the edit without script: version %d, %q", now.Version, now.Text)
		}
	})
}

func getVersion(t *testing.T, p *platform, key, path string) int {
	t.Helper()
	var v transcriptView
	p.do(http.MethodGet, path+"/transcript", key, nil).want(t, 200, "").decode(t, &v)
	return v.Version
}
