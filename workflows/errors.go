package workflows

// stageError carries the code a stage fails with when its activity gave none.
type stageError struct {
	err      error
	fallback string
}

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

func withFallback(err error, code string) error { return &stageError{err: err, fallback: code} }
