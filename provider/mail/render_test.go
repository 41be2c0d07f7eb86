package mail

import (
	"strings"
	"testing"

	"parley/rules/jobspec"
)

func TestRenderJobNoticeLocales(t *testing.T) {
	n := JobNotice{Kind: jobspec.Subtitles, JobID: 7, FileName: "talk.mp4", Outcome: OutcomeDone, Link: "https://app.parley.test/jobs/7"}
	tests := []struct {
		locale      string
		wantSubject string
		wantHTML    string
		wantText    string
	}{
		{locale: "en", wantSubject: "Subtitles ready: talk.mp4", wantHTML: `<html dir="ltr" lang="en">`, wantText: "The subtitles for your file are ready."},
		{locale: "he", wantSubject: "הכתוביות מוכנות: talk.mp4", wantHTML: `<html dir="rtl" lang="he">`, wantText: "הכתוביות לקובץ שלך מוכנות."},
		{locale: "he-IL", wantSubject: "הכתוביות מוכנות: talk.mp4", wantHTML: `<html dir="rtl" lang="he">`, wantText: "משימה: 7"},
		{locale: "ar", wantSubject: "الترجمة جاهزة: talk.mp4", wantHTML: `<html dir="rtl" lang="ar">`, wantText: "ترجمة ملفك جاهزة."},
		{locale: "ar-EG", wantSubject: "الترجمة جاهزة: talk.mp4", wantHTML: `<html dir="rtl" lang="ar">`, wantText: "المهمة: 7"},
		{locale: "fr", wantSubject: "Subtitles ready: talk.mp4", wantHTML: `<html dir="ltr" lang="en">`, wantText: "Job: 7"},
		{locale: "", wantSubject: "Subtitles ready: talk.mp4", wantHTML: `<html dir="ltr" lang="en">`, wantText: "File: talk.mp4"},
		{locale: "not a tag!", wantSubject: "Subtitles ready: talk.mp4", wantHTML: `<html dir="ltr" lang="en">`, wantText: "View the job: https://app.parley.test/jobs/7"},
	}
	for _, tt := range tests {
		t.Run(tt.locale, func(t *testing.T) {
			subject, text, html, err := RenderJobNotice(tt.locale, n)
			if err != nil {
				t.Fatal(err)
			}
			if subject != tt.wantSubject {
				t.Errorf("subject %q, want %q", subject, tt.wantSubject)
			}
			if !strings.Contains(text, tt.wantText) {
				t.Errorf("text lacks %q:\n%s", tt.wantText, text)
			}
			if !strings.Contains(html, tt.wantHTML) {
				t.Errorf("html lacks %q:\n%s", tt.wantHTML, html)
			}
			if !strings.Contains(html, `<a href="https://app.parley.test/jobs/7">`) || !strings.Contains(html, "<bdi>talk.mp4</bdi>") {
				t.Errorf("html lacks the link or the file name:\n%s", html)
			}
		})
	}
}

func TestRenderJobNoticeOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		n           JobNotice
		wantIn      []string
		wantNotIn   []string
		wantSubject string
	}{
		{
			name:        "failed names the reason",
			n:           JobNotice{Kind: jobspec.Transcription, JobID: 9, FileName: "a.wav", Outcome: OutcomeFailed, ErrorMessage: "The audio is silent.", Link: "https://x.test/j/9"},
			wantSubject: "Transcription failed: a.wav",
			wantIn:      []string{"The transcription of your file failed.", "Reason: The audio is silent."},
		},
		{
			name:        "done never shows a reason",
			n:           JobNotice{Kind: jobspec.Transcription, JobID: 9, FileName: "a.wav", Outcome: OutcomeDone, ErrorMessage: "stale", Link: "https://x.test/j/9"},
			wantSubject: "Transcription ready: a.wav",
			wantNotIn:   []string{"Reason", "stale"},
		},
		{
			name:        "subtitles failed",
			n:           JobNotice{Kind: jobspec.Subtitles, JobID: 3, FileName: "b.mp4", Outcome: OutcomeFailed, Link: "http://localhost:8080/jobs/3"},
			wantSubject: "Subtitles failed: b.mp4",
			wantIn:      []string{"The subtitles for your file could not be made.", "View the job: http://localhost:8080/jobs/3"},
			wantNotIn:   []string{"Reason"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subject, text, html, err := RenderJobNotice("en", tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if subject != tt.wantSubject {
				t.Errorf("subject %q, want %q", subject, tt.wantSubject)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(text, s) {
					t.Errorf("text lacks %q:\n%s", s, text)
				}
			}
			for _, s := range tt.wantNotIn {
				if strings.Contains(text, s) || strings.Contains(html, s) {
					t.Errorf("notice shows %q:\n%s\n%s", s, text, html)
				}
			}
		})
	}
}

func TestRenderJobNoticeEscapesUserText(t *testing.T) {
	n := JobNotice{
		Kind: jobspec.Transcription, JobID: 1, Outcome: OutcomeFailed,
		FileName:     "<script>alert(1)</script>\r\nBcc: victim@example.test.mp3",
		ErrorMessage: `bad "quote" & <b>tag</b>`,
		Link:         "https://app.parley.test/jobs/1?a=1&b=2",
	}
	subject, text, html, err := RenderJobNotice("he", n)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(subject, "\r\n") || strings.Contains(text, "\r") {
		t.Errorf("line break survived: subject %q text %q", subject, text)
	}
	if strings.Contains(html, "<script>") || strings.Contains(html, "<b>") {
		t.Errorf("html carries raw markup from user text:\n%s", html)
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt; Bcc: victim@example.test.mp3", "&amp; &lt;b&gt;tag&lt;/b&gt;", `href="https://app.parley.test/jobs/1?a=1&amp;b=2"`} {
		if !strings.Contains(html, want) {
			t.Errorf("html lacks %q:\n%s", want, html)
		}
	}
}

func TestRenderJobNoticeRefusesBadInput(t *testing.T) {
	ok := JobNotice{Kind: jobspec.Transcription, JobID: 1, FileName: "a.wav", Outcome: OutcomeDone, Link: "https://x.test/j/1"}
	tests := []struct {
		name   string
		change func(*JobNotice)
	}{
		{"unknown kind", func(n *JobNotice) { n.Kind = "sms" }},
		{"unknown outcome", func(n *JobNotice) { n.Outcome = "running" }},
		{"no link", func(n *JobNotice) { n.Link = "" }},
		{"relative link", func(n *JobNotice) { n.Link = "/jobs/1" }},
		{"script link", func(n *JobNotice) { n.Link = "javascript:alert(1)" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := ok
			tt.change(&n)
			if _, _, _, err := RenderJobNotice("en", n); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if _, _, _, err := RenderJobNotice("en", ok); err != nil {
		t.Fatalf("valid notice refused: %v", err)
	}
}
