package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"parley/rules/billing"
	"parley/rules/jobspec"
)

// profileServices are named in spend_by_service even before any spend:
// every job stage's service, and the voice and SMS services.
var profileServices = append(jobspec.Services(), billing.ServiceVoiceMinute, billing.ServiceSMS)

type profileJSON struct {
	ID       string      `json:"id"`
	Email    string      `json:"email"`
	Name     string      `json:"name"`
	Role     string      `json:"role"`
	Locale   string      `json:"locale"`
	Balance  balanceJSON `json:"balance"`
	Usage    usageJSON   `json:"usage_last_30d"`
	Paid     bool        `json:"paid"`
	Phone    *string     `json:"phone"`
	Verified bool        `json:"phone_verified"`
}

type balanceJSON struct {
	AmountUSD float64 `json:"amount_usd"`
}

type usageJSON struct {
	TotalSpendUSD  float64            `json:"total_spend_usd"`
	SpendByService map[string]float64 `json:"spend_by_service"`
	Transcriptions int                `json:"transcriptions"`
	SubtitleJobs   int                `json:"subtitle_jobs"`
	VoiceMinutes   int                `json:"voice_minutes"`
	SMSMessages    int                `json:"sms_messages"`
	SMSSegments    int                `json:"sms_segments"`
	APIRequests    int64              `json:"api_requests"`
	APIErrors      int64              `json:"api_errors"`
}

func (s *Server) getProfile(c *gin.Context) {
	// Not the account read with the key, which may be seconds old
	// (keyCacheTTL): the balance is shown as it is now.
	key, _ := keyFrom(c)
	acc, err := s.store.Accounts.Get(c, key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	since := s.now().Add(-30 * 24 * time.Hour)
	spend, err := s.store.Ledger.SpendByService(c, acc.ID, since)
	if err != nil {
		s.fail(c, err)
		return
	}
	jobs, err := s.store.Admissions.CountAdmitted(c, acc.ID, since)
	if err != nil {
		s.fail(c, err)
		return
	}
	requests, errs, err := s.usage.Totals(c, acc.ID, since)
	if err != nil {
		s.fail(c, err)
		return
	}
	voiceMinutes, err := s.voice.Minutes(c, acc.ID, since)
	if err != nil {
		s.fail(c, err)
		return
	}
	sent, err := s.store.SMS.SentSince(c, acc.ID, since)
	if err != nil {
		s.fail(c, err)
		return
	}
	u := usageJSON{
		SpendByService: map[string]float64{},
		Transcriptions: jobs[jobspec.Transcription],
		SubtitleJobs:   jobs[jobspec.Subtitles],
		VoiceMinutes:   voiceMinutes,
		SMSMessages:    sent.Messages,
		SMSSegments:    sent.Segments,
		APIRequests:    requests,
		APIErrors:      errs,
	}
	var total billing.Micros
	for _, svc := range profileServices {
		u.SpendByService[svc] = spend[svc].USD()
	}
	for svc, m := range spend {
		total += m
		u.SpendByService[svc] = m.USD()
	}
	u.TotalSpendUSD = total.USD()
	respond(c, http.StatusOK, profileJSON{
		ID: acc.ID, Email: acc.Email, Name: acc.Name, Role: acc.Role, Locale: acc.Locale,
		Balance: balanceJSON{AmountUSD: acc.BalanceMicros.USD()}, Usage: u,
		Paid: acc.Paid, Phone: acc.Phone, Verified: acc.PhoneVerified,
	})
}
