package localcarrier

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"parley/provider/twilio"
	"parley/rules/sms"
)

// InboundPath is where Parley's API receives inbound SMS webhooks.
const InboundPath = "/hooks/twilio/sms/inbound"

// InboundRequest is one SMS from a phone to one of the account's numbers.
type InboundRequest struct {
	// BaseURL is the API's public origin (PARLEY_BASE_URL): the signature
	// covers BaseURL + InboundPath, as the API checks it.
	BaseURL    string
	AccountSID string
	AuthToken  string
	From       string // the phone that sends
	To         string // the account's number
	Body       string
}

// PostInbound delivers an inbound message to the API as Twilio's incoming
// message webhook does: a signed form POST. It returns the new message sid,
// or an error when the API does not answer 2xx.
func PostInbound(ctx context.Context, in InboundRequest, client *http.Client) (string, error) {
	if in.BaseURL == "" || in.AccountSID == "" || in.AuthToken == "" || in.From == "" || in.To == "" {
		return "", errors.New("inbound message: base URL, account SID, auth token, from and to are required")
	}
	if client == nil {
		client = &http.Client{Timeout: callbackTimeout}
	}
	sid := newSID("SM")
	form := url.Values{
		"MessageSid":    {sid},
		"SmsMessageSid": {sid},
		"SmsSid":        {sid},
		"AccountSid":    {in.AccountSID},
		"From":          {in.From},
		"To":            {in.To},
		"Body":          {in.Body},
		"NumMedia":      {"0"},
		"NumSegments":   {strconv.Itoa(sms.Measure(in.Body).Segments)},
		"SmsStatus":     {twilio.StatusReceived},
		"ApiVersion":    {twilio.APIVersion},
	}
	target := strings.TrimRight(in.BaseURL, "/") + InboundPath
	status, err := postSigned(ctx, client, target, in.AuthToken, form)
	if err != nil {
		return "", fmt.Errorf("inbound message: %w", err)
	}
	if status/100 != 2 {
		return "", fmt.Errorf("inbound message: %s answered HTTP %d", target, status)
	}
	return sid, nil
}
