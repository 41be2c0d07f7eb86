package storage

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Uploads answers which stored uploads jobs still name.
type Uploads struct{ DB bun.IDB }

// Referenced returns the keys among keys that some job, deleted or not,
// names as its media: those uploads are the job's and are kept.
func (r Uploads) Referenced(ctx context.Context, keys []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(keys) == 0 {
		return out, nil
	}
	var found []string
	err := r.DB.NewSelect().Table("jobs").Column("media_key").
		Where("media_key IN (?)", bun.In(keys)).Scan(ctx, &found)
	if err != nil {
		return nil, fmt.Errorf("uploads referenced by jobs: %w", err)
	}
	for _, k := range found {
		out[k] = true
	}
	return out, nil
}
