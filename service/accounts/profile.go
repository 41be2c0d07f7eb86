package accounts

import (
	"context"
	"time"

	"parley/rules/billing"
	"parley/rules/jobspec"
)

// profileServices are named in spend_by_service even before any spend:
// every job stage's service, and the voice and SMS services.
var profileServices = append(jobspec.Services(), billing.ServiceVoiceMinute, billing.ServiceSMS)

// usageWindow is how far back a profile's usage counts.
const usageWindow = 30 * 24 * time.Hour

// Profile reads an account as it is now (not as cached with a key: the
// balance is shown current) with its usage of the last 30 days.
func (s *Service) Profile(ctx context.Context, accountID string) (Profile, error) {
	acc, err := s.d.Accounts.Get(ctx, accountID)
	if err != nil {
		return Profile{}, err
	}
	since := s.d.Now().Add(-usageWindow)
	spend, err := s.d.Ledger.SpendByService(ctx, acc.ID, since)
	if err != nil {
		return Profile{}, err
	}
	jobs, err := s.d.Admissions.CountAdmitted(ctx, acc.ID, since)
	if err != nil {
		return Profile{}, err
	}
	requests, errs, err := s.d.Requests.Totals(ctx, acc.ID, since)
	if err != nil {
		return Profile{}, err
	}
	voiceMinutes, err := s.d.Voice.Minutes(ctx, acc.ID, since)
	if err != nil {
		return Profile{}, err
	}
	sent, err := s.d.SMS.SentSince(ctx, acc.ID, since)
	if err != nil {
		return Profile{}, err
	}
	u := Usage{
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
	return Profile{
		ID: acc.ID, Email: acc.Email, Name: acc.Name, Role: acc.Role, Locale: acc.Locale,
		Balance: Balance{AmountUSD: acc.BalanceMicros.USD()}, Usage: u,
		Paid: acc.Paid, Phone: acc.Phone, Verified: acc.PhoneVerified,
	}, nil
}
