package billing

import "testing"

// The ledger's keys and the price list's items are stored: their spelling
// must not change.
func TestStoredNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{ChargeKey("subtitles", 9, "burn"), "charge:subtitles:9:burn"},
		{ChargeKey("conversation", 4, ServiceVoiceMinute), "charge:conversation:4:voice_minute"},
		{SMSSendKey(12), "sms-message:12:send"},
		{OpeningBalanceKey("acc_1"), "account-create:acc_1"},
		{TopUpKey("ab12"), "topup:ab12"},
		{SMSItem("GB"), "sms:GB"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if c, ok := SMSItemCountry("sms:IL"); !ok || c != "IL" {
		t.Errorf("SMSItemCountry(sms:IL) = %q, %v", c, ok)
	}
	if _, ok := SMSItemCountry(ItemTranscription); ok {
		t.Error("transcription read as an SMS item")
	}
}
