package model

import "time"

// Window is one fixed window a request is counted in, and its budget.
type Window struct {
	Name  string
	Start time.Time
	Limit int
}
