package model

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Size        int64
	ContentType string
	ETag        string
}
