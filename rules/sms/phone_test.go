package sms

import (
	"errors"
	"strings"
	"testing"

	"github.com/nyaruka/phonenumbers"
)

func TestParsePhone(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		country string // "" when the number must be refused
		reason  string // part of the refusal's text
	}{
		{"US", "+12015550123", "US", ""},
		{"US mobile", "+14155552671", "US", ""},
		// +1 is shared: the region comes from the area code.
		{"Canada under +1", "+16135550123", "CA", ""},
		{"Israel mobile", "+972502345678", "IL", ""},
		{"Israel landline", "+97221234567", "IL", ""},
		{"GB mobile", "+447400123456", "GB", ""},
		// +44 7911 belongs to Guernsey in the metadata, not GB.
		{"Guernsey under +44", "+447911123456", "GG", ""},
		// Twilio's magic test numbers: the metadata lists +1 500 as a US range.
		{"twilio 0000", "+15005550000", "US", ""},
		{"twilio invalid", "+15005550001", "US", ""},
		{"twilio undelivered", "+15005550003", "US", ""},
		{"twilio blocked", "+15005550004", "US", ""},
		{"twilio valid", "+15005550006", "US", ""},
		{"twilio not sms-capable", "+15005550009", "US", ""},

		{"missing plus", "12015550123", "", "E.164"},
		{"empty", "", "", "E.164"},
		{"plus only", "+", "", "E.164"},
		{"letters", "+1201555ABCD", "", "E.164"},
		{"spaces", "+1 201 555 0123", "", "E.164"},
		{"dashes", "+1-201-555-0123", "", "E.164"},
		{"double plus", "++12015550123", "", "E.164"},
		{"surrounding space", " +12015550123", "", "E.164"},
		{"extension", "+12015550123x1", "", "E.164"},
		{"sixteen digits", "+1234567890123456", "", "E.164"},
		{"leading zero", "+012015550123", "", "E.164"},
		{"unknown country code", "+2815550123", "", "country code"},
		{"too short for US", "+1201555012", "", "not a valid number"},
		{"too long for US", "+120155501234", "", "not a valid number"},
		{"US 555 range not assigned", "+15551234567", "", "not a valid number"},
		// The metadata rejects IL mobile numbers ending 1234567.
		{"Israel number not in metadata", "+972501234567", "", "not a valid number"},
		// libphonenumber would drop the national 0; E.164 has none.
		{"national prefix kept", "+4407400123456", "", "not a valid number"},
		{"non-geographic", "+80012345678", "", "not a number of any country"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePhone(tc.in)
			if tc.country == "" {
				if !errors.Is(err, ErrInvalidPhone) {
					t.Fatalf("ParsePhone(%q) = %+v, %v; want ErrInvalidPhone", tc.in, p, err)
				}
				if !strings.Contains(err.Error(), tc.reason) {
					t.Errorf("error %q does not say %q", err, tc.reason)
				}
				if len(tc.in) > 3 && strings.Contains(err.Error(), tc.in) {
					t.Errorf("error %q repeats the input", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePhone(%q): %v", tc.in, err)
			}
			if want := (Phone{E164: tc.in, Country: tc.country}); p != want {
				t.Errorf("ParsePhone(%q) = %+v, want %+v", tc.in, p, want)
			}
		})
	}
}

// ParsePhone accepts exactly what it accepted when every number went
// through libphonenumber's Parse: every region's example numbers of several
// types, and their neighbours one digit shorter and longer.
func TestParsePhoneAgreesWithParse(t *testing.T) {
	viaParse := func(s string) (Phone, bool) {
		if !isE164Shape(s) {
			return Phone{}, false
		}
		num, err := phonenumbers.Parse(s, "")
		if err != nil {
			return Phone{}, false
		}
		region := phonenumbers.GetRegionCodeForNumber(num)
		if !phonenumbers.IsValidNumberForRegion(num, region) || phonenumbers.Format(num, phonenumbers.E164) != s || len(region) != 2 {
			return Phone{}, false
		}
		return Phone{E164: s, Country: region}, true
	}
	checked := 0
	for region := range phonenumbers.GetSupportedRegions() {
		for _, typ := range []phonenumbers.PhoneNumberType{phonenumbers.MOBILE, phonenumbers.FIXED_LINE, phonenumbers.TOLL_FREE, phonenumbers.VOIP} {
			ex := phonenumbers.GetExampleNumberForType(region, typ)
			if ex == nil {
				continue
			}
			e164 := phonenumbers.Format(ex, phonenumbers.E164)
			for _, s := range []string{e164, e164[:len(e164)-1], e164 + "1", e164 + "12"} {
				checked++
				want, wantOK := viaParse(s)
				got, err := ParsePhone(s)
				if (err == nil) != wantOK || got != want {
					t.Fatalf("%s: ParsePhone %+v, %v; via Parse %+v, %v", s, got, err, want, wantOK)
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d numbers checked", checked)
	}
}
