//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/storage"
)

// TestConsoleVoice: a person lists their voice agents' conversations and
// reads one: its transcript, the data collected and the evaluation.
func TestConsoleVoice(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, voice: &voiceOptions{SyncInterval: time.Second}})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 10 * billing.MicrosPerUSD})
	if err := (storage.VoiceAgents{DB: p.db}).Add(context.Background(), &model.VoiceAgent{AgentID: "agent_desk", AccountID: acc.ID, Name: "Front desk"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i := range 3 {
		p.voice.Put(call(fmt.Sprintf("conv_console_%d", i), "agent_desk", "", now.Add(-time.Duration(i+1)*time.Minute), 40+i, true))
	}
	eventually(t, time.Minute, "the calls synced", func() bool { return len(p.conversations(key.Secret)) == 3 })
	newest := p.conversations(key.Secret)[0]

	b := newBrowser(t, "caller")
	b.signIn(p, mails, acc.Email)
	b.run(chromedp.Navigate(p.api.URL+"/console/voice"), chromedp.WaitVisible("#conversations", chromedp.ByID))
	b.shot("conversations")
	if got := b.text("#conversations tbody"); strings.Count(got, "Booking check") != 3 || !strings.Contains(got, "Front desk") {
		t.Fatalf("the list shows %q", got)
	}
	b.run(chromedp.Click(fmt.Sprintf(`a[href="/console/voice/%d"]`, newest.ID), chromedp.ByQuery), chromedp.WaitVisible("#transcript", chromedp.ByID))
	b.shot("conversation")
	for sel, want := range map[string]string{
		"#transcript": "Just checking my booking conv_console_0",
		"#data":       "conv_console_0",
		"#evaluation": "resolved",
		"#summary":    "The caller checked booking conv_console_0.",
	} {
		if got := b.text(sel); !strings.Contains(got, want) {
			t.Fatalf("%s shows %q, want %q in it", sel, got, want)
		}
	}

	// Another account's session sees none of them.
	other, _ := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	o := newBrowser(t, "other")
	o.signIn(p, mails, other.Email)
	o.run(chromedp.Navigate(fmt.Sprintf("%s/console/voice/%d", p.api.URL, newest.ID)), chromedp.WaitVisible("#error-message", chromedp.ByID))
	o.shot("not-found")
	o.run(chromedp.Navigate(p.api.URL+"/console/voice"), chromedp.WaitVisible("#no-conversations", chromedp.ByID))
	o.shot("no-conversations")
}
