package billing

// Ledger services that are not job stages (those are in jobspec): what a
// charge is booked under and what /profile's spend_by_service names.
const (
	ServiceVoiceMinute = "voice_minute"
	ServiceSMS         = "sms"
)
