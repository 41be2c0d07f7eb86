package messaging

import (
	"context"
	"errors"

	"go.temporal.io/api/serviceerror"

	"parley/model"
	"parley/rules/sms"
	"parley/workflows"
)

// Signaler is the part of the Temporal client that signals workflows.
type Signaler interface {
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
}

// CancelBatch cancels an account's batch: the recipients not yet handed to
// the carrier end canceled (not charged, their reservation released), and
// the batch concludes as canceled when nothing was sent, else as usual.
// The cancel is recorded in Postgres first, where every send looks before
// it reaches the carrier; the workflow is then told, so that it stops
// waiting for its send time or for quiet hours. Cancelling twice answers
// the canceled batch again; a batch that concluded without a cancel is
// BATCH_ALREADY_CONCLUDED.
func (s *Service) CancelBatch(ctx context.Context, accountID string, id int64) (BatchView, error) {
	if _, err := s.d.SMS.CancelBatch(ctx, accountID, id); err != nil {
		return BatchView{}, err
	}
	s.signalCancel(ctx, workflows.SMSBatchWorkflowID(id))
	return s.Batch(ctx, accountID, id)
}

// CancelMessage cancels an account's single message (one sent without a
// batch) that the carrier has not been handed yet, as CancelBatch does.
func (s *Service) CancelMessage(ctx context.Context, accountID string, id int64) (SentView, error) {
	m, err := s.d.SMS.CancelMessage(ctx, accountID, id)
	if err != nil {
		return SentView{}, err
	}
	s.signalCancel(ctx, workflows.SMSMessageWorkflowID(id))
	return NewSentView(m), nil
}

// signalCancel tells a send's workflow about a recorded cancel. A workflow
// that has ended needs no telling; one that cannot be reached now still
// sends nothing more (every send finds the cancel in Postgres), it only
// concludes when its timer fires instead of at once, so the cancel stands.
// Without a Temporal client (the operator CLI) nothing is signalled.
func (s *Service) signalCancel(ctx context.Context, workflowID string) {
	if s.d.Signals == nil {
		return
	}
	err := s.d.Signals.SignalWorkflow(context.WithoutCancel(ctx), workflowID, "", workflows.SMSCancelSignal, nil)
	var gone *serviceerror.NotFound
	if err != nil && !errors.As(err, &gone) {
		s.d.Log.WithError(err).WithField("workflow_id", workflowID).Warn("could not signal a cancel; the send stops at its next step")
	}
}

// QuietHours are an account's default quiet hours; nil: none.
func (s *Service) QuietHours(ctx context.Context, accountID string) (*sms.QuietHours, error) {
	acc, err := s.d.Accounts.Get(ctx, accountID)
	if err != nil {
		return nil, err
	}
	return quietHours(acc, nil)
}

// SetQuietHours sets an account's default quiet hours, or with nil turns
// them off.
func (s *Service) SetQuietHours(ctx context.Context, accountID string, q *sms.QuietHours) error {
	if q == nil {
		return s.d.SMS.SetQuietHours(ctx, accountID, nil, nil)
	}
	start, end := q.StartClock(), q.EndClock()
	return s.d.SMS.SetQuietHours(ctx, accountID, &start, &end)
}

// Unsettled reports whether a batch status may still change through a
// cancel: the ones before any conclusion.
func Unsettled(status string) bool {
	return status == model.BatchScheduled || status == model.BatchQueued || status == model.BatchProcessing
}
