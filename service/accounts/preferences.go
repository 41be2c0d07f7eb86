package accounts

import (
	"context"

	"parley/model"
	"parley/platform/problem"
)

// NotifyDefaults are what a job created in the web console asks for unless
// its form says otherwise: an e-mail and a text to the owner when it ends.
// Jobs created through the API ask per call (email_after, sms_after) and
// get push only by default.
type NotifyDefaults struct {
	EmailAfter bool
	SMSAfter   bool
}

// NotificationPreferences are an account's NotifyDefaults with the phone
// its texts go to.
type NotificationPreferences struct {
	NotifyDefaults
	// VerifiedPhone is where texts go; nil when the account has no verified
	// phone, and then SMSAfter is off.
	VerifiedPhone *string
}

func notificationPreferences(acc model.Account) NotificationPreferences {
	p := NotificationPreferences{NotifyDefaults: NotifyDefaults{EmailAfter: acc.DefaultEmailAfter, SMSAfter: acc.DefaultSMSAfter}}
	if acc.PhoneVerified {
		p.VerifiedPhone = acc.Phone
	}
	return p
}

// NotificationPreferences reads an account's notification preferences.
func (s *Service) NotificationPreferences(ctx context.Context, accountID string) (NotificationPreferences, error) {
	acc, err := s.d.Accounts.Get(ctx, accountID)
	if err != nil {
		return NotificationPreferences{}, err
	}
	return notificationPreferences(acc), nil
}

// SetNotificationPreferences replaces an account's notification
// preferences. Texts go to a verified phone only, so SMSAfter needs one.
func (s *Service) SetNotificationPreferences(ctx context.Context, accountID string, d NotifyDefaults) (NotificationPreferences, error) {
	acc, err := s.d.Accounts.Get(ctx, accountID)
	if err != nil {
		return NotificationPreferences{}, err
	}
	if d.SMSAfter && (acc.Phone == nil || !acc.PhoneVerified) {
		return NotificationPreferences{}, problem.Invalid(FieldSMSAfter, "needs a verified phone number")
	}
	acc.DefaultEmailAfter, acc.DefaultSMSAfter = d.EmailAfter, d.SMSAfter
	if err := s.d.Accounts.Update(ctx, &acc, "default_email_after", "default_sms_after"); err != nil {
		return NotificationPreferences{}, err
	}
	return notificationPreferences(acc), nil
}

// FieldSMSAfter is the field a refused SMS preference names.
const FieldSMSAfter = "sms_after"
