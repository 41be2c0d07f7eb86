package model

import "time"

// JobFilter picks a page of an account's jobs of one kind, newest first.
type JobFilter struct {
	Limit int
	// Before, when not zero, keeps the jobs with a lower id (the page after
	// the one whose lowest id it is).
	Before int64
	// FileName keeps the jobs whose file name contains it, in any case.
	FileName string
	// Statuses, when not empty, keeps the jobs in one of them.
	Statuses []string
	// From and To, when not zero, keep the jobs created at or after From
	// and before To.
	From, To time.Time
}

// Headline markers: a transcript search puts them around each matching
// word of a passage (the index strips them from the words it stores).
const (
	HitStart = "\ue000"
	HitEnd   = "\ue001"
)

// PassagesPerJob is how many of a job's matching passages a transcript
// search returns.
const PassagesPerJob = 3

// TranscriptHit is one matching passage of a transcript search, with its
// job.
type TranscriptHit struct {
	JobID     int64     `bun:"job_id"`
	Kind      string    `bun:"kind"`
	FileName  string    `bun:"file_name"`
	CreatedAt time.Time `bun:"created_at"`
	// Matches is how many of the job's passages match.
	Matches int `bun:"matches"`
	Seq     int `bun:"seq"`
	// StartSec and EndSec bound the passage; Starts[i] is when Words[i]
	// begins.
	StartSec float64   `bun:"start_sec"`
	EndSec   float64   `bun:"end_sec"`
	Words    []string  `bun:"words,array"`
	Starts   []float64 `bun:"starts,array"`
	// Headline is the passage's words joined by spaces, each matching word
	// between HitStart and HitEnd.
	Headline string `bun:"headline"`
}

// DailySpend is what an account spent on one service in one UTC day, net
// of refunds.
type DailySpend struct {
	Day     time.Time `bun:"day"`
	Service string    `bun:"service"`
	Micros  int64     `bun:"micros"`
}

// MessageFilter picks a page of an account's SMS messages, newest first.
type MessageFilter struct {
	Limit int
	// Before, when not zero, keeps the messages with a lower id.
	Before int64
	// Text keeps the messages whose body contains it, in any case.
	Text string
	// Phone keeps the messages whose sender or recipient contains it.
	Phone string
}
