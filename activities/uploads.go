package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"

	"parley/model"
	"parley/rules/jobspec"
	"parley/workflows"
)

// UploadObjects is the part of the object store the upload sweep uses.
type UploadObjects interface {
	ListPage(ctx context.Context, prefix, startAfter string, limit int) ([]model.StoredObject, error)
	RemoveAll(ctx context.Context, keys []string) error
}

// UploadReferences tells which uploads a job names.
type UploadReferences interface {
	Referenced(ctx context.Context, keys []string) (map[string]bool, error)
}

// Uploads is the activity of the upload sweep.
type Uploads struct {
	References UploadReferences
	Objects    UploadObjects
}

// SweepPage lists one page of uploads and removes those stored before the
// cutoff that no job references. It is idempotent: a retry lists the same
// page again, and what it removed is gone from it. A job admitted from an
// upload names it in the same transaction that creates the job, long
// before the cutoff, so a referenced upload is never removed.
func (a *Uploads) SweepPage(ctx context.Context, in workflows.UploadSweepPageInput) (workflows.UploadSweepPageResult, error) {
	var res workflows.UploadSweepPageResult
	page, err := a.Objects.ListPage(ctx, jobspec.UploadPrefix, in.StartAfter, in.Limit)
	if err != nil {
		return res, err
	}
	res.Listed = len(page)
	if len(page) == in.Limit {
		res.LastKey = page[len(page)-1].Key
	}
	var old []string
	for _, o := range page {
		if o.LastModified.Before(in.Before) {
			old = append(old, o.Key)
		}
	}
	referenced, err := a.References.Referenced(ctx, old)
	if err != nil {
		return res, err
	}
	var orphans []string
	for _, k := range old {
		if !referenced[k] {
			orphans = append(orphans, k)
		}
	}
	if err := a.Objects.RemoveAll(ctx, orphans); err != nil {
		return res, fmt.Errorf("remove orphaned uploads: %w", err)
	}
	res.Removed = len(orphans)
	if len(orphans) > 0 {
		activity.GetLogger(ctx).Info("orphaned uploads removed", "Count", len(orphans), "First", orphans[0])
	}
	return res, nil
}
