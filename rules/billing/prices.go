package billing

import (
	"strings"
)

// Items of the price list (the prices table): per minute of media for each
// job stage and per minute of a voice call, per segment of SMS to each
// country. The migrations seed the per-minute ones.
const (
	ItemTranscription = "transcription"
	ItemVoiceCleanup  = "voice_cleanup"
	ItemSubtitleBurn  = "subtitle_burn"
	ItemVoiceMinute   = "voice_minute"

	smsItemPrefix = "sms:"
)

// PerMinuteItems lists the per-minute items.
func PerMinuteItems() []string {
	return []string{ItemTranscription, ItemVoiceCleanup, ItemSubtitleBurn, ItemVoiceMinute}
}

// SMSItem is the item of a segment to a country (an ISO 3166 alpha-2 code).
func SMSItem(country string) string { return smsItemPrefix + country }

// SMSItemCountry is the country of an SMS item; ok is false for another item.
func SMSItemCountry(item string) (country string, ok bool) {
	return strings.CutPrefix(item, smsItemPrefix)
}
