package api

import (
	"context"
	"time"

	"parley/model"
	"parley/provider/webpush"
	"parley/service/messaging"
	"parley/service/notify"
	"parley/service/voice"
	"parley/service/webhooks"
)

// SMSService is what the SMS, thread and carrier callback handlers ask of
// the messaging service.
type SMSService interface {
	// Configured is false when the deployment has no carrier: every SMS
	// endpoint then answers SMS_NOT_CONFIGURED.
	Configured() bool
	Send(ctx context.Context, req messaging.SendRequest) (messaging.SendResult, error)
	Batch(ctx context.Context, accountID string, id int64) (messaging.BatchView, error)
	CancelBatch(ctx context.Context, accountID string, id int64) (messaging.BatchView, error)
	CancelMessage(ctx context.Context, accountID string, id int64) (messaging.SentView, error)
	Threads(ctx context.Context, accountID string, f model.ThreadFilter) ([]messaging.ThreadView, error)
	Messages(ctx context.Context, accountID string, q messaging.MessageQuery) ([]messaging.MessageView, error)
	Thread(ctx context.Context, accountID string, id, before int64, limit int) (messaging.Conversation, error)
	UpdateThread(ctx context.Context, accountID string, id int64, u messaging.ThreadUpdate) (messaging.ThreadView, error)
	Reply(ctx context.Context, req messaging.ReplyRequest) (messaging.Sent, error)
	CarrierStatus(ctx context.Context, cb messaging.CarrierCallback) error
	Receive(ctx context.Context, cb messaging.CarrierCallback) error
	OptOuts(ctx context.Context, accountID string, f model.OptOutFilter) ([]messaging.OptOutView, error)
	AddOptOuts(ctx context.Context, accountID string, phones []string, source string) ([]messaging.OptOutView, error)
	RemoveOptOut(ctx context.Context, accountID, phone, source string) (messaging.OptOutChangeView, error)
}

// VoiceService is what the conversation handlers, the post-call hook and
// the deep health check ask of the voice service.
type VoiceService interface {
	Configured() bool
	List(ctx context.Context, accountID string) ([]voice.View, error)
	Get(ctx context.Context, accountID string, id int64) (voice.Detail, error)
	Ping(ctx context.Context) (time.Duration, error)
	PostCall(ctx context.Context, signature string, body []byte) (voice.PostCallResult, error)
}

// WebhookService is what the webhook endpoint handlers ask of the webhooks
// service.
type WebhookService interface {
	Register(ctx context.Context, accountID string, r webhooks.Registration) (webhooks.CreatedEndpoint, error)
	List(ctx context.Context, accountID string) ([]webhooks.Endpoint, error)
	Delete(ctx context.Context, accountID string, id int64) error
	Deliveries(ctx context.Context, accountID string, endpointID int64) ([]webhooks.Delivery, error)
	Replay(ctx context.Context, accountID string, id int64) (webhooks.Replayed, error)
}

// PushService is what the push subscription handlers ask of the
// notification service.
type PushService interface {
	Subscribe(ctx context.Context, accountID string, sub webpush.Subscription) (notify.Subscription, error)
	Unsubscribe(ctx context.Context, accountID string, id int64) error
}
