package storage

import "parley/model"

// The records live in package model, so that services can hold them without
// linking bun; storage keeps their names for the activities and tests that
// read rows directly.
type (
	Account                  = model.Account
	APIKey                   = model.APIKey
	IssuedKey                = model.IssuedKey
	KeySpec                  = model.KeySpec
	Job                      = model.Job
	JobProgress              = model.JobProgress
	RunningBatch             = model.RunningBatch
	SubtitleVersion          = model.SubtitleVersion
	TooManyJobsError         = model.TooManyJobsError
	VoiceAgent               = model.VoiceAgent
	Conversation             = model.Conversation
	Event                    = model.Event
	Notification             = model.Notification
	PushSubscription         = model.PushSubscription
	Movement                 = model.Movement
	InsufficientBalanceError = model.InsufficientBalanceError
	Price                    = model.Price
	SMSPrice                 = model.SMSPrice
	OwnedNumber              = model.OwnedNumber
	SMSThread                = model.SMSThread
	SMSBatch                 = model.SMSBatch
	SMSMessage               = model.SMSMessage
	SMSSend                  = model.SMSSend
	SMSUsage                 = model.SMSUsage
	SMSSent                  = model.SMSSent
	ThreadFilter             = model.ThreadFilter
	ThreadChange             = model.ThreadChange
	ContactName              = model.ContactName
	Inbound                  = model.Inbound
	ObjectInfo               = model.ObjectInfo
	Window                   = model.Window
	WebhookEndpoint          = model.WebhookEndpoint
	WebhookDelivery          = model.WebhookDelivery
	WebhookAttempt           = model.WebhookAttempt
)

// The errors repositories return.
var (
	ErrNotFound  = model.ErrNotFound
	ErrConflict  = model.ErrConflict
	ErrKeyReused = model.ErrKeyReused
)

// Statuses and kinds of the records.
const (
	NotificationQueued  = model.NotificationQueued
	NotificationSent    = model.NotificationSent
	NotificationSkipped = model.NotificationSkipped
	NotificationFailed  = model.NotificationFailed

	KindTopUp  = model.KindTopUp
	KindCharge = model.KindCharge
	KindRefund = model.KindRefund

	BatchQueued     = model.BatchQueued
	BatchProcessing = model.BatchProcessing
	BatchCompleted  = model.BatchCompleted
	BatchPartial    = model.BatchPartial
	BatchFailed     = model.BatchFailed

	DeliveryPending   = model.DeliveryPending
	DeliveryDelivered = model.DeliveryDelivered
	DeliveryFailed    = model.DeliveryFailed
)
