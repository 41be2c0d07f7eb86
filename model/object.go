package model

import "time"

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Size        int64
	ContentType string
	ETag        string
}

// StoredObject is one key of a listing and when it was stored.
type StoredObject struct {
	Key          string
	LastModified time.Time
}
