package messaging

import (
	"testing"
	"time"

	"parley/model"
	"parley/rules/sms"
)

// A batch shows when its queued recipients should all be sent at its
// number's pace, and nothing without a pace or with nothing queued.
func TestBatchViewEstimatedCompletion(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.FixedZone("IDT", 3*3600))
	messages := func(statuses ...string) []model.SMSMessage {
		ms := make([]model.SMSMessage, len(statuses))
		for i, s := range statuses {
			ms[i] = model.SMSMessage{ID: int64(i + 1), Status: s}
		}
		return ms
	}
	paced := &model.SenderPace{MessagesPerSecond: 10, Now: now}
	slowed := &model.SenderPace{MessagesPerSecond: 10, SlowedUntil: new(now.Add(time.Hour)), Now: now}
	for _, tc := range []struct {
		name string
		pace *model.SenderPace
		ms   []model.SMSMessage
		want *time.Time
	}{
		{"paced, three queued", paced, messages(sms.Sent, sms.Queued, sms.Queued, sms.Queued), new(now.Add(2 * sms.PaceStep(10, false)).UTC())},
		{"slowed", slowed, messages(sms.Queued, sms.Queued), new(now.Add(sms.PaceStep(10, true)).UTC())},
		{"no pace", nil, messages(sms.Queued, sms.Queued), nil},
		{"nothing queued", paced, messages(sms.Sent, sms.Failed), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := NewBatchView(model.SMSBatch{ID: 1, Pace: tc.pace}, tc.ms)
			switch {
			case tc.want == nil && v.EstimatedCompletionAt != nil:
				t.Fatalf("estimatedCompletionAt %v, want none", v.EstimatedCompletionAt)
			case tc.want != nil && (v.EstimatedCompletionAt == nil || !v.EstimatedCompletionAt.Equal(*tc.want) || v.EstimatedCompletionAt.Location() != time.UTC):
				t.Fatalf("estimatedCompletionAt %v, want %v in UTC", v.EstimatedCompletionAt, *tc.want)
			}
		})
	}
}
