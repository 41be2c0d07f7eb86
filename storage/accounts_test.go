//go:build integration

package storage_test

import (
	"context"
	"testing"

	"parley/devstack/testenv"
	"parley/storage"
)

// The notification preferences are off for a new account, are written by
// name, and the SMS one stays off while the phone is not verified.
func TestAccountNotificationPreferences(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{})
	r := storage.Accounts{DB: db}
	if acc.DefaultEmailAfter || acc.DefaultSMSAfter {
		t.Fatalf("a new account: %+v", acc)
	}
	acc.DefaultEmailAfter = true
	if err := r.Update(ctx, &acc, "default_email_after"); err != nil {
		t.Fatal(err)
	}
	acc.DefaultSMSAfter = true
	if err := r.Update(ctx, &acc, "default_sms_after"); err == nil {
		t.Fatal("texts by default were stored for an account without a verified phone")
	}
	phone := "+12025550100"
	acc.Phone, acc.PhoneVerified = &phone, true
	if err := r.Update(ctx, &acc, "phone", "phone_verified", "default_sms_after"); err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(ctx, acc.ID)
	if err != nil || !got.DefaultEmailAfter || !got.DefaultSMSAfter {
		t.Fatalf("read back: %+v, %v", got, err)
	}
}
