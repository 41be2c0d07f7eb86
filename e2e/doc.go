// Package e2e holds the end-to-end tests: the real API and worker against the
// real Postgres, Temporal and MinIO that `make test` starts, with real ffmpeg
// and the offline speech engine. It has no production code.
package e2e
