package messaging

import (
	"context"
	"unicode/utf8"

	"parley/rules/billing"
	"parley/rules/sms"
)

// Estimate is what a send would be, computed as Send computes it but
// admitting nothing: the console shows it while a person types.
type Estimate struct {
	Recipients int
	// Characters, Segments and Encoding are the first recipient's message
	// (the body as typed while there is no recipient).
	Characters int
	Segments   int
	Encoding   string
	// TotalSegments and Price add every recipient's message; Price is zero
	// while there is no recipient to price.
	TotalSegments int
	Price         billing.Micros
}

// Estimate checks a send under Send's rules up to its price (quota and
// balance are checked when it is sent) and measures it. With no recipient
// yet it measures the body alone.
func (s *Service) Estimate(ctx context.Context, req SendRequest) (Estimate, error) {
	if len(req.Recipients) == 0 {
		seg := sms.Measure(req.Body)
		return Estimate{Characters: seg.Chars, Segments: seg.Segments, Encoding: string(seg.Encoding)}, nil
	}
	send, _, err := s.validate(ctx, req)
	if err != nil {
		return Estimate{}, err
	}
	first := send.Messages[0]
	e := Estimate{Recipients: len(send.Messages), Characters: utf8.RuneCountInString(first.Body), Segments: first.Segments,
		Encoding: first.Encoding}
	for _, m := range send.Messages {
		e.TotalSegments += m.Segments
		e.Price += m.PriceMicros
	}
	return e, nil
}
