package accounts

import (
	"context"
	"testing"

	"parley/model"
	"parley/platform/problem"
)

func TestNotificationPreferences(t *testing.T) {
	ctx := context.Background()
	phone := "+12025550100"
	for _, tc := range []struct {
		name    string
		account model.Account
		set     NotifyDefaults
		want    string
	}{
		{"e-mail on", model.Account{}, NotifyDefaults{EmailAfter: true}, ""},
		{"both on with a verified phone", model.Account{Phone: &phone, PhoneVerified: true}, NotifyDefaults{EmailAfter: true, SMSAfter: true}, ""},
		{"both off again", model.Account{Phone: &phone, PhoneVerified: true, DefaultEmailAfter: true, DefaultSMSAfter: true}, NotifyDefaults{}, ""},
		{"texts without a phone", model.Account{}, NotifyDefaults{SMSAfter: true}, problem.ValidationError},
		{"texts to a phone not verified", model.Account{Phone: &phone}, NotifyDefaults{EmailAfter: true, SMSAfter: true}, problem.ValidationError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newOperatorFixture()
			tc.account.ID = "acc_1"
			f.accounts["acc_1"] = tc.account
			got, err := f.svc.SetNotificationPreferences(ctx, "acc_1", tc.set)
			if c := codeOf(err); c != tc.want {
				t.Fatalf("got %q, want %q", c, tc.want)
			}
			read, err := f.svc.NotificationPreferences(ctx, "acc_1")
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				if stored := f.accounts["acc_1"]; stored.DefaultEmailAfter != tc.account.DefaultEmailAfter || stored.DefaultSMSAfter != tc.account.DefaultSMSAfter {
					t.Fatalf("a refused change was stored: %+v", stored)
				}
				return
			}
			if got.NotifyDefaults != tc.set || read != got {
				t.Fatalf("set %+v, got %+v, read back %+v", tc.set, got, read)
			}
			if (read.VerifiedPhone != nil) != tc.account.PhoneVerified {
				t.Fatalf("verified phone %v for %+v", read.VerifiedPhone, tc.account)
			}
		})
	}
	f := newOperatorFixture()
	if _, err := f.svc.NotificationPreferences(ctx, "acc_9"); err != model.ErrNotFound {
		t.Fatalf("an unknown account: %v", err)
	}
}

// A new phone is not verified, and the owner asked for texts to the old one.
func TestNewPhoneTurnsTextsOff(t *testing.T) {
	ctx := context.Background()
	f := newOperatorFixture()
	phone := "+12025550100"
	f.accounts["acc_1"] = model.Account{ID: "acc_1", Phone: &phone, PhoneVerified: true, DefaultEmailAfter: true, DefaultSMSAfter: true}
	if _, err := f.svc.UpdateAccount(ctx, "acc_1", AccountChange{Phone: "+12025550199"}); err != nil {
		t.Fatal(err)
	}
	p, err := f.svc.NotificationPreferences(ctx, "acc_1")
	if err != nil {
		t.Fatal(err)
	}
	if p.SMSAfter || !p.EmailAfter || p.VerifiedPhone != nil {
		t.Fatalf("after a new phone: %+v", p)
	}
}
